from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.merged_child import MergedChild
    from ..models.page import Page
    from ..models.table_summary import TableSummary


T = TypeVar("T", bound="MergedResult")


@_attrs_define
class MergedResult:
    """
    Attributes:
        children (list[MergedChild]):
        pages (list[Page]):
        text (str): The pages' texts; with options.layout, each page's body blocks in reading order (no running header
            or footer, no words of a figure).
        tables (list[TableSummary] | Unset): options.layout: the document's tables, numbered from 1 (present once a page
            has blocks).
    """

    children: list[MergedChild]
    pages: list[Page]
    text: str
    tables: list[TableSummary] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        children = []
        for children_item_data in self.children:
            children_item = children_item_data.to_dict()
            children.append(children_item)

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
                "children": children,
                "pages": pages,
                "text": text,
            }
        )
        if tables is not UNSET:
            field_dict["tables"] = tables

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.merged_child import MergedChild  # noqa: PLC0415
        from ..models.page import Page  # noqa: PLC0415
        from ..models.table_summary import TableSummary  # noqa: PLC0415

        d = dict(src_dict)
        children = []
        _children = d.pop("children")
        for children_item_data in _children:
            children_item = MergedChild.from_dict(children_item_data)

            children.append(children_item)

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

        merged_result = cls(
            children=children,
            pages=pages,
            text=text,
            tables=tables,
        )

        return merged_result
