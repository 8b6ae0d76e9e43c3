from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.error_code import ErrorCode
from ..models.job_status import JobStatus
from ..models.job_summary_kind import JobSummaryKind
from ..types import UNSET, Unset

T = TypeVar("T", bound="JobSummary")


@_attrs_define
class JobSummary:
    """
    Attributes:
        created_at (datetime.datetime | None):
        error_code (ErrorCode | None):
        finished_at (datetime.datetime | None):
        id (str):
        kind (JobSummaryKind):
        model (str):
        started_at (datetime.datetime | None):
        status (JobStatus): A job's status; completed, failed, cancelled are terminal.
        url (str):
        progress (float | Unset): Parents: terminal children / total.
        total (int | Unset): Parents: how many children.
    """

    created_at: datetime.datetime | None
    error_code: ErrorCode | None
    finished_at: datetime.datetime | None
    id: str
    kind: JobSummaryKind
    model: str
    started_at: datetime.datetime | None
    status: JobStatus
    url: str
    progress: float | Unset = UNSET
    total: int | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        created_at: None | str
        if isinstance(self.created_at, datetime.datetime):
            created_at = self.created_at.isoformat()
        else:
            created_at = self.created_at

        error_code: None | str
        if isinstance(self.error_code, ErrorCode):
            error_code = self.error_code.value
        else:
            error_code = self.error_code

        finished_at: None | str
        if isinstance(self.finished_at, datetime.datetime):
            finished_at = self.finished_at.isoformat()
        else:
            finished_at = self.finished_at

        id = self.id

        kind = self.kind.value

        model = self.model

        started_at: None | str
        if isinstance(self.started_at, datetime.datetime):
            started_at = self.started_at.isoformat()
        else:
            started_at = self.started_at

        status = self.status.value

        url = self.url

        progress = self.progress

        total = self.total

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "created_at": created_at,
                "error_code": error_code,
                "finished_at": finished_at,
                "id": id,
                "kind": kind,
                "model": model,
                "started_at": started_at,
                "status": status,
                "url": url,
            }
        )
        if progress is not UNSET:
            field_dict["progress"] = progress
        if total is not UNSET:
            field_dict["total"] = total

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_created_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                created_at_type_0 = datetime.datetime.fromisoformat(data)

                return created_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        created_at = _parse_created_at(d.pop("created_at"))

        def _parse_error_code(data: object) -> ErrorCode | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                error_code_type_1 = ErrorCode(data)

                return error_code_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ErrorCode | None, data)

        error_code = _parse_error_code(d.pop("error_code"))

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

        id = d.pop("id")

        kind = JobSummaryKind(d.pop("kind"))

        model = d.pop("model")

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

        status = JobStatus(d.pop("status"))

        url = d.pop("url")

        progress = d.pop("progress", UNSET)

        total = d.pop("total", UNSET)

        job_summary = cls(
            created_at=created_at,
            error_code=error_code,
            finished_at=finished_at,
            id=id,
            kind=kind,
            model=model,
            started_at=started_at,
            status=status,
            url=url,
            progress=progress,
            total=total,
        )

        return job_summary
