from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

T = TypeVar("T", bound="Cell")


@_attrs_define
class Cell:
    """
    Attributes:
        bbox (list[int]): x0, y0, x1, y1 in pixels of the page, as the lines' boxes.
        col (int): Its first column, from 0.
        col_span (int): How many columns it covers (1 or more).
        row (int): The cell's first row, from 0.
        row_span (int): How many rows it covers (1 or more).
        text (str): The page's words that fall in the cell.
    """

    bbox: list[int]
    col: int
    col_span: int
    row: int
    row_span: int
    text: str

    def to_dict(self) -> dict[str, Any]:
        bbox = self.bbox

        col = self.col

        col_span = self.col_span

        row = self.row

        row_span = self.row_span

        text = self.text

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "bbox": bbox,
                "col": col,
                "col_span": col_span,
                "row": row,
                "row_span": row_span,
                "text": text,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        bbox = cast(list[int], d.pop("bbox"))

        col = d.pop("col")

        col_span = d.pop("col_span")

        row = d.pop("row")

        row_span = d.pop("row_span")

        text = d.pop("text")

        cell = cls(
            bbox=bbox,
            col=col,
            col_span=col_span,
            row=row,
            row_span=row_span,
            text=text,
        )

        return cell
