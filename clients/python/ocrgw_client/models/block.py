from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.block_type import BlockType
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.table import Table


T = TypeVar("T", bound="Block")


@_attrs_define
class Block:
    """
    Attributes:
        bbox (list[int]): x0, y0, x1, y1 in pixels of the page, as the lines' boxes.
        lines (list[int]): Its lines, indices into the page's lines, in reading order (top to bottom, column by column
            where the block holds two); every line is in exactly one block.
        order (int): Its place in the page's reading order, from 0.
        text (str): Its lines as one paragraph (a word hyphenated at a line's end joined back); a table's: its rows, one
            a line, its cells apart by tabs.
        type_ (BlockType):
        caption (int | Unset): A figure's or table's: the order of its caption's block.
        caption_of (int | Unset): A caption's: the order of the block it describes.
        level (int | Unset): Headings only: 1 for a title, 2 or 3 for a section header.
        table (Table | Unset):
    """

    bbox: list[int]
    lines: list[int]
    order: int
    text: str
    type_: BlockType
    caption: int | Unset = UNSET
    caption_of: int | Unset = UNSET
    level: int | Unset = UNSET
    table: Table | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        bbox = self.bbox

        lines = self.lines

        order = self.order

        text = self.text

        type_ = self.type_.value

        caption = self.caption

        caption_of = self.caption_of

        level = self.level

        table: dict[str, Any] | Unset = UNSET
        if not isinstance(self.table, Unset):
            table = self.table.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "bbox": bbox,
                "lines": lines,
                "order": order,
                "text": text,
                "type": type_,
            }
        )
        if caption is not UNSET:
            field_dict["caption"] = caption
        if caption_of is not UNSET:
            field_dict["caption_of"] = caption_of
        if level is not UNSET:
            field_dict["level"] = level
        if table is not UNSET:
            field_dict["table"] = table

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.table import Table  # noqa: PLC0415

        d = dict(src_dict)
        bbox = cast(list[int], d.pop("bbox"))

        lines = cast(list[int], d.pop("lines"))

        order = d.pop("order")

        text = d.pop("text")

        type_ = BlockType(d.pop("type"))

        caption = d.pop("caption", UNSET)

        caption_of = d.pop("caption_of", UNSET)

        level = d.pop("level", UNSET)

        _table = d.pop("table", UNSET)
        table: Table | Unset
        if isinstance(_table, Unset):
            table = UNSET
        else:
            table = Table.from_dict(_table)

        block = cls(
            bbox=bbox,
            lines=lines,
            order=order,
            text=text,
            type_=type_,
            caption=caption,
            caption_of=caption_of,
            level=level,
            table=table,
        )

        return block
