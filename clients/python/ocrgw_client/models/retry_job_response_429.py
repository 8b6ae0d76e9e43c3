from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.error_code import ErrorCode
from ..models.problem_limit import ProblemLimit
from ..models.retry_job_response_429_code import RetryJobResponse429Code
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.problem_errors import ProblemErrors


T = TypeVar("T", bound="RetryJobResponse429")


@_attrs_define
class RetryJobResponse429:
    """
    Attributes:
        code (RetryJobResponse429Code): A problem's stable code; each always has the same HTTP status.

            - `admin_key_required` (403): Admin key required
            - `bad_request` (400): plain HTTP
            - `content_type_mismatch` (415): Content type does not match the document
            - `cross_site_request` (403): Request from a page of another site
            - `draining` (503): Gateway draining
            - `empty_document` (422): Empty document
            - `encrypted_document` (422): Document is encrypted
            - `group_not_finished` (409): Group still running
            - `host_not_allowed` (400): Host not allowed
            - `idempotency_key_reused` (422): Idempotency-Key reused for a different request
            - `inspection_budget_exceeded` (413): Documents take too long to check
            - `interactive_limit_reached` (429): Too many interactive jobs in flight
            - `interactive_not_allowed` (403): Interactive lane not allowed for this key
            - `internal_error` (500): Internal error
            - `invalid_api_key` (401): Invalid API key
            - `invalid_base64` (400): Payload is not valid base64
            - `invalid_callback_url` (422): Callback URL refused
            - `invalid_document` (422): Document cannot be read
            - `invalid_field` (422): Invalid field
            - `invalid_idempotency_key` (400): Invalid Idempotency-Key header
            - `invalid_last_event_id` (400): Invalid Last-Event-ID header
            - `invalid_options` (422): Option the model cannot honour
            - `job_finished` (409): Job already finished
            - `job_not_found` (404): Job not found
            - `json_content_type_required` (415): JSON body without a JSON Content-Type
            - `malformed_json` (400): Malformed JSON body
            - `method_not_allowed` (405): plain HTTP
            - `missing_api_key` (401): API key required
            - `missing_content_type` (415): Missing Content-Type
            - `no_children` (422): Fan-out group without children
            - `no_result` (409): Job ended without a result
            - `not_a_group` (409): Not a fan-out group
            - `not_found` (404): plain HTTP
            - `nothing_to_retry` (409): Nothing to retry
            - `on_prem_required` (403): Document must stay on premises
            - `payload_too_large` (413): Request body too large
            - `pdf_unavailable` (409): No searchable PDF for this job
            - `request_header_fields_too_large` (431): Request headers too large
            - `result_not_ready` (409): Result not ready
            - `store_unavailable` (503): Job store unavailable
            - `table_not_found` (404): Table not found
            - `too_many_children` (422): Too many children
            - `too_many_pages` (422): Too many pages
            - `too_many_pixels` (422): Page image too large
            - `too_many_streams` (429): Too many open event streams
            - `unknown_model` (422): Unknown model
            - `unsupported_content_type` (415): Content type not supported by the model
            - `unsupported_language` (422): Language not installed on any worker
            - `uri_too_long` (414): Request line too long
        detail (str):
        status (int):
        title (str):
        type_ (str): The code's page in the manual this gateway serves, a relative URI reference
            (`/manual/problems/<code>/`); or about:blank.
        accepted (list[str] | Unset): The content types the model accepts.
        child_index (int | Unset): The child of a group that the problem is about.
        declared (str | Unset): content_type_mismatch: the content type the request gave.
        detected (None | str | Unset): content_type_mismatch: the type the bytes are (null: none ocrgw knows).
        error_code (ErrorCode | None | Unset): no_result: why the job failed.
        errors (ProblemErrors | Unset): invalid_field: the messages of each invalid field.
        height (int | Unset): too_many_pixels: its height in pixels.
        in_use (int | Unset): interactive_limit_reached: the tenant's interactive places held now.
        inspection_seconds (float | Unset): inspection_budget_exceeded: the seconds a request's document checks may
            take.
        installed_languages (list[str] | Unset): unsupported_language: the languages the live workers have.
        interactive_max_inflight (int | Unset): interactive_limit_reached: how many the key allows.
        job_id (str | Unset):
        job_status (str | Unset): no_result, result_not_ready, job_finished: the job's status (how it ended).
        limit (ProblemLimit | Unset): too_many_streams: the limit reached, the tenant's or the gateway process's.
        max_body_bytes (int | Unset):
        max_children (int | Unset):
        max_image_pixels (int | Unset): too_many_pixels: the most pixels a page may have.
        max_inspections (int | Unset): inspection_budget_exceeded: the distinct documents a request may have checked.
        max_pages (int | Unset): too_many_pages: the most a document may have.
        max_streams (int | Unset): too_many_streams: the most open streams that limit allows.
        missing_languages (list[str] | Unset): unsupported_language: the languages no live worker has.
        models (list[str] | Unset): The known models.
        options (list[str] | Unset): invalid_options: the options refused.
        page (int | Unset): too_many_pixels: the page (1-based) that is too large.
        page_count (int | Unset): too_many_pages: how many the document has (absent: more than could be counted).
        tables (int | Unset): table_not_found: how many tables the result has.
        width (int | Unset): too_many_pixels: its width in pixels (as drawn, for a PDF).
    """

    code: RetryJobResponse429Code
    detail: str
    status: int
    title: str
    type_: str
    accepted: list[str] | Unset = UNSET
    child_index: int | Unset = UNSET
    declared: str | Unset = UNSET
    detected: None | str | Unset = UNSET
    error_code: ErrorCode | None | Unset = UNSET
    errors: ProblemErrors | Unset = UNSET
    height: int | Unset = UNSET
    in_use: int | Unset = UNSET
    inspection_seconds: float | Unset = UNSET
    installed_languages: list[str] | Unset = UNSET
    interactive_max_inflight: int | Unset = UNSET
    job_id: str | Unset = UNSET
    job_status: str | Unset = UNSET
    limit: ProblemLimit | Unset = UNSET
    max_body_bytes: int | Unset = UNSET
    max_children: int | Unset = UNSET
    max_image_pixels: int | Unset = UNSET
    max_inspections: int | Unset = UNSET
    max_pages: int | Unset = UNSET
    max_streams: int | Unset = UNSET
    missing_languages: list[str] | Unset = UNSET
    models: list[str] | Unset = UNSET
    options: list[str] | Unset = UNSET
    page: int | Unset = UNSET
    page_count: int | Unset = UNSET
    tables: int | Unset = UNSET
    width: int | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        code = self.code.value

        detail = self.detail

        status = self.status

        title = self.title

        type_ = self.type_

        accepted: list[str] | Unset = UNSET
        if not isinstance(self.accepted, Unset):
            accepted = self.accepted

        child_index = self.child_index

        declared = self.declared

        detected: None | str | Unset
        if isinstance(self.detected, Unset):
            detected = UNSET
        else:
            detected = self.detected

        error_code: None | str | Unset
        if isinstance(self.error_code, Unset):
            error_code = UNSET
        elif isinstance(self.error_code, ErrorCode):
            error_code = self.error_code.value
        else:
            error_code = self.error_code

        errors: dict[str, Any] | Unset = UNSET
        if not isinstance(self.errors, Unset):
            errors = self.errors.to_dict()

        height = self.height

        in_use = self.in_use

        inspection_seconds = self.inspection_seconds

        installed_languages: list[str] | Unset = UNSET
        if not isinstance(self.installed_languages, Unset):
            installed_languages = self.installed_languages

        interactive_max_inflight = self.interactive_max_inflight

        job_id = self.job_id

        job_status = self.job_status

        limit: str | Unset = UNSET
        if not isinstance(self.limit, Unset):
            limit = self.limit.value

        max_body_bytes = self.max_body_bytes

        max_children = self.max_children

        max_image_pixels = self.max_image_pixels

        max_inspections = self.max_inspections

        max_pages = self.max_pages

        max_streams = self.max_streams

        missing_languages: list[str] | Unset = UNSET
        if not isinstance(self.missing_languages, Unset):
            missing_languages = self.missing_languages

        models: list[str] | Unset = UNSET
        if not isinstance(self.models, Unset):
            models = self.models

        options: list[str] | Unset = UNSET
        if not isinstance(self.options, Unset):
            options = self.options

        page = self.page

        page_count = self.page_count

        tables = self.tables

        width = self.width

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "code": code,
                "detail": detail,
                "status": status,
                "title": title,
                "type": type_,
            }
        )
        if accepted is not UNSET:
            field_dict["accepted"] = accepted
        if child_index is not UNSET:
            field_dict["child_index"] = child_index
        if declared is not UNSET:
            field_dict["declared"] = declared
        if detected is not UNSET:
            field_dict["detected"] = detected
        if error_code is not UNSET:
            field_dict["error_code"] = error_code
        if errors is not UNSET:
            field_dict["errors"] = errors
        if height is not UNSET:
            field_dict["height"] = height
        if in_use is not UNSET:
            field_dict["in_use"] = in_use
        if inspection_seconds is not UNSET:
            field_dict["inspection_seconds"] = inspection_seconds
        if installed_languages is not UNSET:
            field_dict["installed_languages"] = installed_languages
        if interactive_max_inflight is not UNSET:
            field_dict["interactive_max_inflight"] = interactive_max_inflight
        if job_id is not UNSET:
            field_dict["job_id"] = job_id
        if job_status is not UNSET:
            field_dict["job_status"] = job_status
        if limit is not UNSET:
            field_dict["limit"] = limit
        if max_body_bytes is not UNSET:
            field_dict["max_body_bytes"] = max_body_bytes
        if max_children is not UNSET:
            field_dict["max_children"] = max_children
        if max_image_pixels is not UNSET:
            field_dict["max_image_pixels"] = max_image_pixels
        if max_inspections is not UNSET:
            field_dict["max_inspections"] = max_inspections
        if max_pages is not UNSET:
            field_dict["max_pages"] = max_pages
        if max_streams is not UNSET:
            field_dict["max_streams"] = max_streams
        if missing_languages is not UNSET:
            field_dict["missing_languages"] = missing_languages
        if models is not UNSET:
            field_dict["models"] = models
        if options is not UNSET:
            field_dict["options"] = options
        if page is not UNSET:
            field_dict["page"] = page
        if page_count is not UNSET:
            field_dict["page_count"] = page_count
        if tables is not UNSET:
            field_dict["tables"] = tables
        if width is not UNSET:
            field_dict["width"] = width

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.problem_errors import ProblemErrors  # noqa: PLC0415

        d = dict(src_dict)
        code = RetryJobResponse429Code(d.pop("code"))

        detail = d.pop("detail")

        status = d.pop("status")

        title = d.pop("title")

        type_ = d.pop("type")

        accepted = cast(list[str], d.pop("accepted", UNSET))

        child_index = d.pop("child_index", UNSET)

        declared = d.pop("declared", UNSET)

        def _parse_detected(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        detected = _parse_detected(d.pop("detected", UNSET))

        def _parse_error_code(data: object) -> ErrorCode | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                error_code_type_1 = ErrorCode(data)

                return error_code_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ErrorCode | None | Unset, data)

        error_code = _parse_error_code(d.pop("error_code", UNSET))

        _errors = d.pop("errors", UNSET)
        errors: ProblemErrors | Unset
        if isinstance(_errors, Unset):
            errors = UNSET
        else:
            errors = ProblemErrors.from_dict(_errors)

        height = d.pop("height", UNSET)

        in_use = d.pop("in_use", UNSET)

        inspection_seconds = d.pop("inspection_seconds", UNSET)

        installed_languages = cast(list[str], d.pop("installed_languages", UNSET))

        interactive_max_inflight = d.pop("interactive_max_inflight", UNSET)

        job_id = d.pop("job_id", UNSET)

        job_status = d.pop("job_status", UNSET)

        _limit = d.pop("limit", UNSET)
        limit: ProblemLimit | Unset
        if isinstance(_limit, Unset):
            limit = UNSET
        else:
            limit = ProblemLimit(_limit)

        max_body_bytes = d.pop("max_body_bytes", UNSET)

        max_children = d.pop("max_children", UNSET)

        max_image_pixels = d.pop("max_image_pixels", UNSET)

        max_inspections = d.pop("max_inspections", UNSET)

        max_pages = d.pop("max_pages", UNSET)

        max_streams = d.pop("max_streams", UNSET)

        missing_languages = cast(list[str], d.pop("missing_languages", UNSET))

        models = cast(list[str], d.pop("models", UNSET))

        options = cast(list[str], d.pop("options", UNSET))

        page = d.pop("page", UNSET)

        page_count = d.pop("page_count", UNSET)

        tables = d.pop("tables", UNSET)

        width = d.pop("width", UNSET)

        retry_job_response_429 = cls(
            code=code,
            detail=detail,
            status=status,
            title=title,
            type_=type_,
            accepted=accepted,
            child_index=child_index,
            declared=declared,
            detected=detected,
            error_code=error_code,
            errors=errors,
            height=height,
            in_use=in_use,
            inspection_seconds=inspection_seconds,
            installed_languages=installed_languages,
            interactive_max_inflight=interactive_max_inflight,
            job_id=job_id,
            job_status=job_status,
            limit=limit,
            max_body_bytes=max_body_bytes,
            max_children=max_children,
            max_image_pixels=max_image_pixels,
            max_inspections=max_inspections,
            max_pages=max_pages,
            max_streams=max_streams,
            missing_languages=missing_languages,
            models=models,
            options=options,
            page=page,
            page_count=page_count,
            tables=tables,
            width=width,
        )

        retry_job_response_429.additional_properties = d
        return retry_job_response_429

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
