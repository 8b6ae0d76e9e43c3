from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.line_source import LineSource
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.word import Word


T = TypeVar("T", bound="Line")


@_attrs_define
class Line:
    """
    Attributes:
        bbox (list[int]): x0, y0, x1, y1 in pixels.
        confidence (float): 0 to 1.
        text (str):
        source (LineSource | Unset): Present on an OCRed page only for a line taken from the PDF's own visible text
            (options.text_layer 'redo'); otherwise the line comes from the page's source.
        words (list[Word] | Unset): The line's words, in reading order, each inside the line's box.
    """

    bbox: list[int]
    confidence: float
    text: str
    source: LineSource | Unset = UNSET
    words: list[Word] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        bbox = self.bbox

        confidence = self.confidence

        text = self.text

        source: str | Unset = UNSET
        if not isinstance(self.source, Unset):
            source = self.source.value

        words: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.words, Unset):
            words = []
            for words_item_data in self.words:
                words_item = words_item_data.to_dict()
                words.append(words_item)

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "bbox": bbox,
                "confidence": confidence,
                "text": text,
            }
        )
        if source is not UNSET:
            field_dict["source"] = source
        if words is not UNSET:
            field_dict["words"] = words

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.word import Word  # noqa: PLC0415

        d = dict(src_dict)
        bbox = cast(list[int], d.pop("bbox"))

        confidence = d.pop("confidence")

        text = d.pop("text")

        _source = d.pop("source", UNSET)
        source: LineSource | Unset
        if isinstance(_source, Unset):
            source = UNSET
        else:
            source = LineSource(_source)

        _words = d.pop("words", UNSET)
        words: list[Word] | Unset = UNSET
        if _words is not UNSET:
            words = []
            for words_item_data in _words:
                words_item = Word.from_dict(words_item_data)

                words.append(words_item)

        line = cls(
            bbox=bbox,
            confidence=confidence,
            text=text,
            source=source,
            words=words,
        )

        return line
