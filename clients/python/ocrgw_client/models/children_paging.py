from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

T = TypeVar("T", bound="ChildrenPaging")


@_attrs_define
class ChildrenPaging:
    """
    Attributes:
        limit (int):
        next_ (None | str): The URL of the next page; null on the last.
        offset (int):
        total (int): Children matching the filter.
    """

    limit: int
    next_: None | str
    offset: int
    total: int

    def to_dict(self) -> dict[str, Any]:
        limit = self.limit

        next_: None | str
        next_ = self.next_

        offset = self.offset

        total = self.total

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "limit": limit,
                "next": next_,
                "offset": offset,
                "total": total,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        limit = d.pop("limit")

        def _parse_next_(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        next_ = _parse_next_(d.pop("next"))

        offset = d.pop("offset")

        total = d.pop("total")

        children_paging = cls(
            limit=limit,
            next_=next_,
            offset=offset,
            total=total,
        )

        return children_paging
