from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

T = TypeVar("T", bound="Run")


@_attrs_define
class Run:
    """
    Attributes:
        attempt (int):
        finished_at (datetime.datetime | None):
        outcome (str): completed, failed, cancelled, retrying (a transient error) or reclaimed (its lease expired).
        started_at (datetime.datetime | None):
    """

    attempt: int
    finished_at: datetime.datetime | None
    outcome: str
    started_at: datetime.datetime | None

    def to_dict(self) -> dict[str, Any]:
        attempt = self.attempt

        finished_at: None | str
        if isinstance(self.finished_at, datetime.datetime):
            finished_at = self.finished_at.isoformat()
        else:
            finished_at = self.finished_at

        outcome = self.outcome

        started_at: None | str
        if isinstance(self.started_at, datetime.datetime):
            started_at = self.started_at.isoformat()
        else:
            started_at = self.started_at

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "attempt": attempt,
                "finished_at": finished_at,
                "outcome": outcome,
                "started_at": started_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        attempt = d.pop("attempt")

        def _parse_finished_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                finished_at_type_0 = datetime.datetime.fromisoformat(data)

                return finished_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        finished_at = _parse_finished_at(d.pop("finished_at"))

        outcome = d.pop("outcome")

        def _parse_started_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                started_at_type_0 = datetime.datetime.fromisoformat(data)

                return started_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        started_at = _parse_started_at(d.pop("started_at"))

        run = cls(
            attempt=attempt,
            finished_at=finished_at,
            outcome=outcome,
            started_at=started_at,
        )

        return run
