from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.error_code import ErrorCode
from ..models.job_status import JobStatus
from ..models.parent_view_kind import ParentViewKind
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.child_summary import ChildSummary
    from ..models.children_paging import ChildrenPaging
    from ..models.counts import Counts
    from ..models.job_usage import JobUsage


T = TypeVar("T", bound="ParentView")


@_attrs_define
class ParentView:
    """
    Attributes:
        cancel_requested (bool):
        counts (Counts):
        created_at (datetime.datetime | None):
        error_code (ErrorCode | None): child_failed or child_cancelled, past its tolerance.
        fail_fast (bool): Past the tolerance, held children are cancelled.
        finished_at (datetime.datetime | None):
        id (str):
        idempotency_key (None | str):
        kind (ParentViewKind):
        max_parallel (int):
        model (str): The children's model, or 'mixed'.
        progress (float): Terminal children / total.
        redrives (int): Times its failed children were retried.
        result_url (None | str): GET it for the merged result, once terminal.
        started_at (datetime.datetime | None):
        status (JobStatus): A job's status; completed, failed, cancelled are terminal.
        tolerated_failures (int): Children that may fail (or be cancelled) and the group complete.
        total (int):
        usage (JobUsage):
        children (list[ChildSummary] | Unset): A page of children (absent with children=none).
        children_page (ChildrenPaging | Unset):
    """

    cancel_requested: bool
    counts: Counts
    created_at: datetime.datetime | None
    error_code: ErrorCode | None
    fail_fast: bool
    finished_at: datetime.datetime | None
    id: str
    idempotency_key: None | str
    kind: ParentViewKind
    max_parallel: int
    model: str
    progress: float
    redrives: int
    result_url: None | str
    started_at: datetime.datetime | None
    status: JobStatus
    tolerated_failures: int
    total: int
    usage: JobUsage
    children: list[ChildSummary] | Unset = UNSET
    children_page: ChildrenPaging | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        cancel_requested = self.cancel_requested

        counts = self.counts.to_dict()

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

        fail_fast = self.fail_fast

        finished_at: None | str
        if isinstance(self.finished_at, datetime.datetime):
            finished_at = self.finished_at.isoformat()
        else:
            finished_at = self.finished_at

        id = self.id

        idempotency_key: None | str
        idempotency_key = self.idempotency_key

        kind = self.kind.value

        max_parallel = self.max_parallel

        model = self.model

        progress = self.progress

        redrives = self.redrives

        result_url: None | str
        result_url = self.result_url

        started_at: None | str
        if isinstance(self.started_at, datetime.datetime):
            started_at = self.started_at.isoformat()
        else:
            started_at = self.started_at

        status = self.status.value

        tolerated_failures = self.tolerated_failures

        total = self.total

        usage = self.usage.to_dict()

        children: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.children, Unset):
            children = []
            for children_item_data in self.children:
                children_item = children_item_data.to_dict()
                children.append(children_item)

        children_page: dict[str, Any] | Unset = UNSET
        if not isinstance(self.children_page, Unset):
            children_page = self.children_page.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "cancel_requested": cancel_requested,
                "counts": counts,
                "created_at": created_at,
                "error_code": error_code,
                "fail_fast": fail_fast,
                "finished_at": finished_at,
                "id": id,
                "idempotency_key": idempotency_key,
                "kind": kind,
                "max_parallel": max_parallel,
                "model": model,
                "progress": progress,
                "redrives": redrives,
                "result_url": result_url,
                "started_at": started_at,
                "status": status,
                "tolerated_failures": tolerated_failures,
                "total": total,
                "usage": usage,
            }
        )
        if children is not UNSET:
            field_dict["children"] = children
        if children_page is not UNSET:
            field_dict["children_page"] = children_page

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.child_summary import ChildSummary  # noqa: PLC0415
        from ..models.children_paging import ChildrenPaging  # noqa: PLC0415
        from ..models.counts import Counts  # noqa: PLC0415
        from ..models.job_usage import JobUsage  # noqa: PLC0415

        d = dict(src_dict)
        cancel_requested = d.pop("cancel_requested")

        counts = Counts.from_dict(d.pop("counts"))

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

        fail_fast = d.pop("fail_fast")

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

        kind = ParentViewKind(d.pop("kind"))

        max_parallel = d.pop("max_parallel")

        model = d.pop("model")

        progress = d.pop("progress")

        redrives = d.pop("redrives")

        def _parse_result_url(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        result_url = _parse_result_url(d.pop("result_url"))

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

        tolerated_failures = d.pop("tolerated_failures")

        total = d.pop("total")

        usage = JobUsage.from_dict(d.pop("usage"))

        _children = d.pop("children", UNSET)
        children: list[ChildSummary] | Unset = UNSET
        if _children is not UNSET:
            children = []
            for children_item_data in _children:
                children_item = ChildSummary.from_dict(children_item_data)

                children.append(children_item)

        _children_page = d.pop("children_page", UNSET)
        children_page: ChildrenPaging | Unset
        if isinstance(_children_page, Unset):
            children_page = UNSET
        else:
            children_page = ChildrenPaging.from_dict(_children_page)

        parent_view = cls(
            cancel_requested=cancel_requested,
            counts=counts,
            created_at=created_at,
            error_code=error_code,
            fail_fast=fail_fast,
            finished_at=finished_at,
            id=id,
            idempotency_key=idempotency_key,
            kind=kind,
            max_parallel=max_parallel,
            model=model,
            progress=progress,
            redrives=redrives,
            result_url=result_url,
            started_at=started_at,
            status=status,
            tolerated_failures=tolerated_failures,
            total=total,
            usage=usage,
            children=children,
            children_page=children_page,
        )

        return parent_view
