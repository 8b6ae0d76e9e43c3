from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.get_result_pdf_response_202_status import GetResultPdfResponse202Status

T = TypeVar("T", bound="GetResultPdfResponse202")


@_attrs_define
class GetResultPdfResponse202:
    """
    Attributes:
        id (str):
        status (GetResultPdfResponse202Status):
        url (str): Where to ask again: this URL.
    """

    id: str
    status: GetResultPdfResponse202Status
    url: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        status = self.status.value

        url = self.url

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "status": status,
                "url": url,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        status = GetResultPdfResponse202Status(d.pop("status"))

        url = d.pop("url")

        get_result_pdf_response_202 = cls(
            id=id,
            status=status,
            url=url,
        )

        get_result_pdf_response_202.additional_properties = d
        return get_result_pdf_response_202

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
