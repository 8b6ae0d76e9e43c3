from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.error_code import ErrorCode
from ..models.event_operation import EventOperation
from ..models.event_outcome import EventOutcome
from ..models.job_status import JobStatus
from ..models.webhook_error_code import WebhookErrorCode
from ..types import UNSET, Unset

T = TypeVar("T", bound="Event")


@_attrs_define
class Event:
    """
    Attributes:
        error_code (ErrorCode | None | WebhookErrorCode): job, job_child: why the job failed (an ErrorCode,
            /manual/errors/<code>/), null if it did not; webhook: why the attempt failed (a WebhookErrorCode,
            /manual/webhook-errors/<code>/), null if it did not.
        id (str):
        job_id (str):
        model (str):
        operation (EventOperation):
        parent_job_id (None | str):
        status (JobStatus): A job's status; completed, failed, cancelled are terminal.
        time (datetime.datetime | None):
        attempt (int | Unset): webhook: the attempt's number, from 1.
        error (None | str | Unset): webhook: what went wrong, in words.
        key_id (None | str | Unset): job, job_child: the id of the API key that submitted it (never the key itself).
        outcome (EventOutcome | Unset): webhook: what follows the attempt.
        response_status (int | None | Unset): webhook: the receiver's HTTP status, null if it did not answer.
        retry_at (datetime.datetime | None | Unset): webhook: when the next attempt is due.
        tenant (str | Unset): job, job_child: the tenant whose job it is.
    """

    error_code: ErrorCode | None | WebhookErrorCode
    id: str
    job_id: str
    model: str
    operation: EventOperation
    parent_job_id: None | str
    status: JobStatus
    time: datetime.datetime | None
    attempt: int | Unset = UNSET
    error: None | str | Unset = UNSET
    key_id: None | str | Unset = UNSET
    outcome: EventOutcome | Unset = UNSET
    response_status: int | None | Unset = UNSET
    retry_at: datetime.datetime | None | Unset = UNSET
    tenant: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        error_code: None | str
        if isinstance(self.error_code, ErrorCode):
            error_code = self.error_code.value
        elif isinstance(self.error_code, WebhookErrorCode):
            error_code = self.error_code.value
        else:
            error_code = self.error_code

        id = self.id

        job_id = self.job_id

        model = self.model

        operation = self.operation.value

        parent_job_id: None | str
        parent_job_id = self.parent_job_id

        status = self.status.value

        time: None | str
        if isinstance(self.time, datetime.datetime):
            time = self.time.isoformat()
        else:
            time = self.time

        attempt = self.attempt

        error: None | str | Unset
        if isinstance(self.error, Unset):
            error = UNSET
        else:
            error = self.error

        key_id: None | str | Unset
        if isinstance(self.key_id, Unset):
            key_id = UNSET
        else:
            key_id = self.key_id

        outcome: str | Unset = UNSET
        if not isinstance(self.outcome, Unset):
            outcome = self.outcome.value

        response_status: int | None | Unset
        if isinstance(self.response_status, Unset):
            response_status = UNSET
        else:
            response_status = self.response_status

        retry_at: None | str | Unset
        if isinstance(self.retry_at, Unset):
            retry_at = UNSET
        elif isinstance(self.retry_at, datetime.datetime):
            retry_at = self.retry_at.isoformat()
        else:
            retry_at = self.retry_at

        tenant = self.tenant

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "error_code": error_code,
                "id": id,
                "job_id": job_id,
                "model": model,
                "operation": operation,
                "parent_job_id": parent_job_id,
                "status": status,
                "time": time,
            }
        )
        if attempt is not UNSET:
            field_dict["attempt"] = attempt
        if error is not UNSET:
            field_dict["error"] = error
        if key_id is not UNSET:
            field_dict["key_id"] = key_id
        if outcome is not UNSET:
            field_dict["outcome"] = outcome
        if response_status is not UNSET:
            field_dict["response_status"] = response_status
        if retry_at is not UNSET:
            field_dict["retry_at"] = retry_at
        if tenant is not UNSET:
            field_dict["tenant"] = tenant

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_error_code(data: object) -> ErrorCode | None | WebhookErrorCode:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                error_code_type_0 = ErrorCode(data)

                return error_code_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, str):
                    raise TypeError()
                error_code_type_1 = WebhookErrorCode(data)

                return error_code_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ErrorCode | None | WebhookErrorCode, data)

        error_code = _parse_error_code(d.pop("error_code"))

        id = d.pop("id")

        job_id = d.pop("job_id")

        model = d.pop("model")

        operation = EventOperation(d.pop("operation"))

        def _parse_parent_job_id(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        parent_job_id = _parse_parent_job_id(d.pop("parent_job_id"))

        status = JobStatus(d.pop("status"))

        def _parse_time(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                time_type_0 = datetime.datetime.fromisoformat(data)

                return time_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        time = _parse_time(d.pop("time"))

        attempt = d.pop("attempt", UNSET)

        def _parse_error(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        error = _parse_error(d.pop("error", UNSET))

        def _parse_key_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        key_id = _parse_key_id(d.pop("key_id", UNSET))

        _outcome = d.pop("outcome", UNSET)
        outcome: EventOutcome | Unset
        if isinstance(_outcome, Unset):
            outcome = UNSET
        else:
            outcome = EventOutcome(_outcome)

        def _parse_response_status(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        response_status = _parse_response_status(d.pop("response_status", UNSET))

        def _parse_retry_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                retry_at_type_0 = datetime.datetime.fromisoformat(data)

                return retry_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        retry_at = _parse_retry_at(d.pop("retry_at", UNSET))

        tenant = d.pop("tenant", UNSET)

        event = cls(
            error_code=error_code,
            id=id,
            job_id=job_id,
            model=model,
            operation=operation,
            parent_job_id=parent_job_id,
            status=status,
            time=time,
            attempt=attempt,
            error=error,
            key_id=key_id,
            outcome=outcome,
            response_status=response_status,
            retry_at=retry_at,
            tenant=tenant,
        )

        return event
