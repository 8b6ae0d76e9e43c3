from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.merged_child import MergedChild
    from ..models.page import Page


T = TypeVar("T", bound="MergedResult")


@_attrs_define
class MergedResult:
    """
    Attributes:
        children (list[MergedChild]):
        pages (list[Page]):
        text (str):
    """

    children: list[MergedChild]
    pages: list[Page]
    text: str

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

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "children": children,
                "pages": pages,
                "text": text,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.merged_child import MergedChild  # noqa: PLC0415
        from ..models.page import Page  # noqa: PLC0415

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

        merged_result = cls(
            children=children,
            pages=pages,
            text=text,
        )

        return merged_result
