from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

T = TypeVar("T", bound="TableSummary")


@_attrs_define
class TableSummary:
    """
    Attributes:
        block (int): Its block's order on that page.
        caption (None | str): Its caption's text, if it has one.
        cols (int):
        number (int): From 1, over the whole document.
        page (int): The page it is on.
        rows (int):
    """

    block: int
    caption: None | str
    cols: int
    number: int
    page: int
    rows: int

    def to_dict(self) -> dict[str, Any]:
        block = self.block

        caption: None | str
        caption = self.caption

        cols = self.cols

        number = self.number

        page = self.page

        rows = self.rows

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "block": block,
                "caption": caption,
                "cols": cols,
                "number": number,
                "page": page,
                "rows": rows,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        block = d.pop("block")

        def _parse_caption(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        caption = _parse_caption(d.pop("caption"))

        cols = d.pop("cols")

        number = d.pop("number")

        page = d.pop("page")

        rows = d.pop("rows")

        table_summary = cls(
            block=block,
            caption=caption,
            cols=cols,
            number=number,
            page=page,
            rows=rows,
        )

        return table_summary
