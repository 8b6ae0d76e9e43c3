from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.error_code import ErrorCode
from ..models.job_status import JobStatus

T = TypeVar("T", bound="MergedChild")


@_attrs_define
class MergedChild:
    """
    Attributes:
        error_code (ErrorCode | None):
        id (str):
        index (int):
        status (JobStatus): A job's status; completed, failed, cancelled are terminal.
        text (None | str): The child's text if it completed.
    """

    error_code: ErrorCode | None
    id: str
    index: int
    status: JobStatus
    text: None | str

    def to_dict(self) -> dict[str, Any]:
        error_code: None | str
        if isinstance(self.error_code, ErrorCode):
            error_code = self.error_code.value
        else:
            error_code = self.error_code

        id = self.id

        index = self.index

        status = self.status.value

        text: None | str
        text = self.text

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "error_code": error_code,
                "id": id,
                "index": index,
                "status": status,
                "text": text,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

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

        id = d.pop("id")

        index = d.pop("index")

        status = JobStatus(d.pop("status"))

        def _parse_text(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        text = _parse_text(d.pop("text"))

        merged_child = cls(
            error_code=error_code,
            id=id,
            index=index,
            status=status,
            text=text,
        )

        return merged_child
