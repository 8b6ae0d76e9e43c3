from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.page import Page


T = TypeVar("T", bound="Result")


@_attrs_define
class Result:
    """
    Attributes:
        pages (list[Page]):
        text (str):
    """

    pages: list[Page]
    text: str

    def to_dict(self) -> dict[str, Any]:
        pages = []
        for pages_item_data in self.pages:
            pages_item = pages_item_data.to_dict()
            pages.append(pages_item)

        text = self.text

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "pages": pages,
                "text": text,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.page import Page  # noqa: PLC0415

        d = dict(src_dict)
        pages = []
        _pages = d.pop("pages")
        for pages_item_data in _pages:
            pages_item = Page.from_dict(pages_item_data)

            pages.append(pages_item)

        text = d.pop("text")

        result = cls(
            pages=pages,
            text=text,
        )

        return result
