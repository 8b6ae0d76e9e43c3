from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.error_code import ErrorCode
from ..models.job_status import JobStatus
from ..models.single_job_view_kind import SingleJobViewKind
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.job_usage import JobUsage
    from ..models.result import Result
    from ..models.run import Run


T = TypeVar("T", bound="SingleJobView")


@_attrs_define
class SingleJobView:
    """
    Attributes:
        attempts (int):
        cancel_requested (bool): A client asked to cancel it; a running job stops at its next page.
        content_type (str):
        created_at (datetime.datetime | None):
        doc_hash (str):
        error (None | str): Once failed or cancelled.
        error_code (ErrorCode | None): Once failed.
        finished_at (datetime.datetime | None):
        id (str):
        idempotency_key (None | str):
        kind (SingleJobViewKind):
        model (str):
        pages (int):
        progress (float):
        result (None | Result): Once completed.
        runs (list[Run]): Ended attempts, oldest first.
        stage (str):
        started_at (datetime.datetime | None):
        status (JobStatus): A job's status; completed, failed, cancelled are terminal.
        usage (JobUsage):
        index (int | Unset):
        last_error (str | Unset):
        last_error_code (ErrorCode | None | Unset): Why the current attempt is a retry.
        parent_id (str | Unset):
    """

    attempts: int
    cancel_requested: bool
    content_type: str
    created_at: datetime.datetime | None
    doc_hash: str
    error: None | str
    error_code: ErrorCode | None
    finished_at: datetime.datetime | None
    id: str
    idempotency_key: None | str
    kind: SingleJobViewKind
    model: str
    pages: int
    progress: float
    result: None | Result
    runs: list[Run]
    stage: str
    started_at: datetime.datetime | None
    status: JobStatus
    usage: JobUsage
    index: int | Unset = UNSET
    last_error: str | Unset = UNSET
    last_error_code: ErrorCode | None | Unset = UNSET
    parent_id: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.result import Result  # noqa: PLC0415

        attempts = self.attempts

        cancel_requested = self.cancel_requested

        content_type = self.content_type

        created_at: None | str
        if isinstance(self.created_at, datetime.datetime):
            created_at = self.created_at.isoformat()
        else:
            created_at = self.created_at

        doc_hash = self.doc_hash

        error: None | str
        error = self.error

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

        idempotency_key: None | str
        idempotency_key = self.idempotency_key

        kind = self.kind.value

        model = self.model

        pages = self.pages

        progress = self.progress

        result: dict[str, Any] | None
        if isinstance(self.result, Result):
            result = self.result.to_dict()
        else:
            result = self.result

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

        usage = self.usage.to_dict()

        index = self.index

        last_error = self.last_error

        last_error_code: None | str | Unset
        if isinstance(self.last_error_code, Unset):
            last_error_code = UNSET
        elif isinstance(self.last_error_code, ErrorCode):
            last_error_code = self.last_error_code.value
        else:
            last_error_code = self.last_error_code

        parent_id = self.parent_id

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "attempts": attempts,
                "cancel_requested": cancel_requested,
                "content_type": content_type,
                "created_at": created_at,
                "doc_hash": doc_hash,
                "error": error,
                "error_code": error_code,
                "finished_at": finished_at,
                "id": id,
                "idempotency_key": idempotency_key,
                "kind": kind,
                "model": model,
                "pages": pages,
                "progress": progress,
                "result": result,
                "runs": runs,
                "stage": stage,
                "started_at": started_at,
                "status": status,
                "usage": usage,
            }
        )
        if index is not UNSET:
            field_dict["index"] = index
        if last_error is not UNSET:
            field_dict["last_error"] = last_error
        if last_error_code is not UNSET:
            field_dict["last_error_code"] = last_error_code
        if parent_id is not UNSET:
            field_dict["parent_id"] = parent_id

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.job_usage import JobUsage  # noqa: PLC0415
        from ..models.result import Result  # noqa: PLC0415
        from ..models.run import Run  # noqa: PLC0415

        d = dict(src_dict)
        attempts = d.pop("attempts")

        cancel_requested = d.pop("cancel_requested")

        content_type = d.pop("content_type")

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

        doc_hash = d.pop("doc_hash")

        def _parse_error(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        error = _parse_error(d.pop("error"))

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

        def _parse_idempotency_key(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        idempotency_key = _parse_idempotency_key(d.pop("idempotency_key"))

        kind = SingleJobViewKind(d.pop("kind"))

        model = d.pop("model")

        pages = d.pop("pages")

        progress = d.pop("progress")

        def _parse_result(data: object) -> None | Result:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                result_type_1 = Result.from_dict(data)

                return result_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Result, data)

        result = _parse_result(d.pop("result"))

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

        usage = JobUsage.from_dict(d.pop("usage"))

        index = d.pop("index", UNSET)

        last_error = d.pop("last_error", UNSET)

        def _parse_last_error_code(data: object) -> ErrorCode | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                last_error_code_type_1 = ErrorCode(data)

                return last_error_code_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ErrorCode | None | Unset, data)

        last_error_code = _parse_last_error_code(d.pop("last_error_code", UNSET))

        parent_id = d.pop("parent_id", UNSET)

        single_job_view = cls(
            attempts=attempts,
            cancel_requested=cancel_requested,
            content_type=content_type,
            created_at=created_at,
            doc_hash=doc_hash,
            error=error,
            error_code=error_code,
            finished_at=finished_at,
            id=id,
            idempotency_key=idempotency_key,
            kind=kind,
            model=model,
            pages=pages,
            progress=progress,
            result=result,
            runs=runs,
            stage=stage,
            started_at=started_at,
            status=status,
            usage=usage,
            index=index,
            last_error=last_error,
            last_error_code=last_error_code,
            parent_id=parent_id,
        )

        return single_job_view
