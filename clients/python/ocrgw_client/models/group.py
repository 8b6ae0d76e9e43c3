from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.fanout import Fanout


T = TypeVar("T", bound="Group")


@_attrs_define
class Group:
    """
    Attributes:
        fanout (Fanout):
    """

    fanout: Fanout

    def to_dict(self) -> dict[str, Any]:
        fanout = self.fanout.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "fanout": fanout,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.fanout import Fanout  # noqa: PLC0415

        d = dict(src_dict)
        fanout = Fanout.from_dict(d.pop("fanout"))

        group = cls(
            fanout=fanout,
        )

        return group
