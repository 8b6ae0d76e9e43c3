from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="Cap")


@_attrs_define
class Cap:
    """
    Attributes:
        max_parallel (int): At most this many children run at once from now on; <= 0: no cap.
    """

    max_parallel: int

    def to_dict(self) -> dict[str, Any]:
        max_parallel = self.max_parallel

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "max_parallel": max_parallel,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        max_parallel = d.pop("max_parallel")

        cap = cls(
            max_parallel=max_parallel,
        )

        return cap
