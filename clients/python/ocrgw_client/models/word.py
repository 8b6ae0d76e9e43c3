from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

T = TypeVar("T", bound="Word")


@_attrs_define
class Word:
    """
    Attributes:
        bbox (list[int]): x0, y0, x1, y1 in pixels.
        confidence (float): 0 to 1.
        text (str):
    """

    bbox: list[int]
    confidence: float
    text: str

    def to_dict(self) -> dict[str, Any]:
        bbox = self.bbox

        confidence = self.confidence

        text = self.text

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "bbox": bbox,
                "confidence": confidence,
                "text": text,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        bbox = cast(list[int], d.pop("bbox"))

        confidence = d.pop("confidence")

        text = d.pop("text")

        word = cls(
            bbox=bbox,
            confidence=confidence,
            text=text,
        )

        return word
