from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="Retry")


@_attrs_define
class Retry:
    """
    Attributes:
        include_cancelled (bool | Unset): Cancelled children too, not only failed ones. Default: False.
    """

    include_cancelled: bool | Unset = False

    def to_dict(self) -> dict[str, Any]:
        include_cancelled = self.include_cancelled

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if include_cancelled is not UNSET:
            field_dict["include_cancelled"] = include_cancelled

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        include_cancelled = d.pop("include_cancelled", UNSET)

        retry = cls(
            include_cancelled=include_cancelled,
        )

        return retry
