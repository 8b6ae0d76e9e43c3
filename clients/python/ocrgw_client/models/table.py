from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.cell import Cell


T = TypeVar("T", bound="Table")


@_attrs_define
class Table:
    """
    Attributes:
        cells (list[Cell]):
        cols (int):
        html (str): The table as an HTML <table>, spans included.
        rows (int):
    """

    cells: list[Cell]
    cols: int
    html: str
    rows: int

    def to_dict(self) -> dict[str, Any]:
        cells = []
        for cells_item_data in self.cells:
            cells_item = cells_item_data.to_dict()
            cells.append(cells_item)

        cols = self.cols

        html = self.html

        rows = self.rows

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "cells": cells,
                "cols": cols,
                "html": html,
                "rows": rows,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.cell import Cell  # noqa: PLC0415

        d = dict(src_dict)
        cells = []
        _cells = d.pop("cells")
        for cells_item_data in _cells:
            cells_item = Cell.from_dict(cells_item_data)

            cells.append(cells_item)

        cols = d.pop("cols")

        html = d.pop("html")

        rows = d.pop("rows")

        table = cls(
            cells=cells,
            cols=cols,
            html=html,
            rows=rows,
        )

        return table
