from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.error_code import ErrorCode
from ..models.job_status import JobStatus

if TYPE_CHECKING:
    from ..models.run import Run


T = TypeVar("T", bound="ChildSummary")


@_attrs_define
class ChildSummary:
    """
    Attributes:
        attempts (int):
        doc_hash (str):
        error_code (ErrorCode | None):
        finished_at (datetime.datetime | None):
        id (str):
        index (int):
        model (str):
        progress (float):
        runs (list[Run]): Ended attempts, oldest first.
        stage (str):
        started_at (datetime.datetime | None):
        status (JobStatus): A job's status; completed, failed, cancelled are terminal.
    """

    attempts: int
    doc_hash: str
    error_code: ErrorCode | None
    finished_at: datetime.datetime | None
    id: str
    index: int
    model: str
    progress: float
    runs: list[Run]
    stage: str
    started_at: datetime.datetime | None
    status: JobStatus

    def to_dict(self) -> dict[str, Any]:
        attempts = self.attempts

        doc_hash = self.doc_hash

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

        index = self.index

        model = self.model

        progress = self.progress

        runs = []
        for runs_item_data in self.runs:
            runs_item = runs_item_data.to_dict()
            runs.append(runs_item)

        stage = self.stage

        started_at: None | str
        if isinstance(self.started_at, datetime.datetime):
            started_at = self.started_at.isoformat()
        else:
            started_at = self.started_at

        status = self.status.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "attempts": attempts,
                "doc_hash": doc_hash,
                "error_code": error_code,
                "finished_at": finished_at,
                "id": id,
                "index": index,
                "model": model,
                "progress": progress,
                "runs": runs,
                "stage": stage,
                "started_at": started_at,
                "status": status,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.run import Run  # noqa: PLC0415

        d = dict(src_dict)
        attempts = d.pop("attempts")

        doc_hash = d.pop("doc_hash")

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

        index = d.pop("index")

        model = d.pop("model")

        progress = d.pop("progress")

        runs = []
        _runs = d.pop("runs")
        for runs_item_data in _runs:
            runs_item = Run.from_dict(runs_item_data)

            runs.append(runs_item)

        stage = d.pop("stage")

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

        child_summary = cls(
            attempts=attempts,
            doc_hash=doc_hash,
            error_code=error_code,
            finished_at=finished_at,
            id=id,
            index=index,
            model=model,
            progress=progress,
            runs=runs,
            stage=stage,
            started_at=started_at,
            status=status,
        )

        return child_summary
