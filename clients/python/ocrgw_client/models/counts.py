from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="Counts")


@_attrs_define
class Counts:
    """
    Attributes:
        cancelled (int):
        completed (int):
        failed (int):
        held (int):
        processing (int):
        queued (int):
    """

    cancelled: int
    completed: int
    failed: int
    held: int
    processing: int
    queued: int

    def to_dict(self) -> dict[str, Any]:
        cancelled = self.cancelled

        completed = self.completed

        failed = self.failed

        held = self.held

        processing = self.processing

        queued = self.queued

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "cancelled": cancelled,
                "completed": completed,
                "failed": failed,
                "held": held,
                "processing": processing,
                "queued": queued,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        cancelled = d.pop("cancelled")

        completed = d.pop("completed")

        failed = d.pop("failed")

        held = d.pop("held")

        processing = d.pop("processing")

        queued = d.pop("queued")

        counts = cls(
            cancelled=cancelled,
            completed=completed,
            failed=failed,
            held=held,
            processing=processing,
            queued=queued,
        )

        return counts
