from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.page import Page
    from ..models.table_summary import TableSummary


T = TypeVar("T", bound="Result")


@_attrs_define
class Result:
    """
    Attributes:
        pages (list[Page]):
        text (str): The pages' texts; with options.layout, each page's body blocks in reading order (no running header
            or footer, no words of a figure).
        tables (list[TableSummary] | Unset): options.layout: the document's tables, numbered from 1 (present once a page
            has blocks).
    """

    pages: list[Page]
    text: str
    tables: list[TableSummary] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        pages = []
        for pages_item_data in self.pages:
            pages_item = pages_item_data.to_dict()
            pages.append(pages_item)

        text = self.text

        tables: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.tables, Unset):
            tables = []
            for tables_item_data in self.tables:
                tables_item = tables_item_data.to_dict()
                tables.append(tables_item)

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "pages": pages,
                "text": text,
            }
        )
        if tables is not UNSET:
            field_dict["tables"] = tables

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.page import Page  # noqa: PLC0415
        from ..models.table_summary import TableSummary  # noqa: PLC0415

        d = dict(src_dict)
        pages = []
        _pages = d.pop("pages")
        for pages_item_data in _pages:
            pages_item = Page.from_dict(pages_item_data)

            pages.append(pages_item)

        text = d.pop("text")

        _tables = d.pop("tables", UNSET)
        tables: list[TableSummary] | Unset = UNSET
        if _tables is not UNSET:
            tables = []
            for tables_item_data in _tables:
                tables_item = TableSummary.from_dict(tables_item_data)

                tables.append(tables_item)

        result = cls(
            pages=pages,
            text=text,
            tables=tables,
        )

        return result
