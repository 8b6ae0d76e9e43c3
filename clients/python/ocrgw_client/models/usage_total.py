from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="UsageTotal")


@_attrs_define
class UsageTotal:
    """
    Attributes:
        engine_seconds (float): Every ended attempt's run, its start to its end (its runs).
        input_bytes (int): Its document's bytes, once completed (a split PDF's: with its first pages).
        jobs (int): Single jobs and children completed.
        model (str):
        ocr_pages (int): Pages its engine read, once completed.
        text_layer_pages (int): Pages answered from the PDF's own text layer, once completed.
    """

    engine_seconds: float
    input_bytes: int
    jobs: int
    model: str
    ocr_pages: int
    text_layer_pages: int

    def to_dict(self) -> dict[str, Any]:
        engine_seconds = self.engine_seconds

        input_bytes = self.input_bytes

        jobs = self.jobs

        model = self.model

        ocr_pages = self.ocr_pages

        text_layer_pages = self.text_layer_pages

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "engine_seconds": engine_seconds,
                "input_bytes": input_bytes,
                "jobs": jobs,
                "model": model,
                "ocr_pages": ocr_pages,
                "text_layer_pages": text_layer_pages,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        engine_seconds = d.pop("engine_seconds")

        input_bytes = d.pop("input_bytes")

        jobs = d.pop("jobs")

        model = d.pop("model")

        ocr_pages = d.pop("ocr_pages")

        text_layer_pages = d.pop("text_layer_pages")

        usage_total = cls(
            engine_seconds=engine_seconds,
            input_bytes=input_bytes,
            jobs=jobs,
            model=model,
            ocr_pages=ocr_pages,
            text_layer_pages=text_layer_pages,
        )

        return usage_total
