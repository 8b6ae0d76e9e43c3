from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.create_job_model import CreateJobModel
from ...models.create_job_priority import CreateJobPriority
from ...models.group import Group
from ...models.job import Job
from ...models.parent_view import ParentView
from ...models.problem import Problem
from ...models.single_job_view import SingleJobView
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    body: Group | Job,
    doc_hash: str | Unset = UNSET,
    model: CreateJobModel | Unset = UNSET,
    pages: int | Unset = UNSET,
    callback_url: str | Unset = UNSET,
    split_pages: int | Unset = UNSET,
    max_parallel: int | Unset = UNSET,
    on_prem: bool | Unset = UNSET,
    priority: CreateJobPriority | Unset = UNSET,
    webhook_events: str | Unset = UNSET,
    idempotency_key: str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key

    params: dict[str, Any] = {}

    params["doc_hash"] = doc_hash

    json_model: str | Unset = UNSET
    if not isinstance(model, Unset):
        json_model = model.value

    params["model"] = json_model

    params["pages"] = pages

    params["callback_url"] = callback_url

    params["split_pages"] = split_pages

    params["max_parallel"] = max_parallel

    params["on_prem"] = on_prem

    json_priority: str | Unset = UNSET
    if not isinstance(priority, Unset):
        json_priority = priority.value

    params["priority"] = json_priority

    params["webhook_events"] = webhook_events

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/jobs",
        "params": params,
    }

    if isinstance(body, Job):
        _kwargs["json"] = body.to_dict()
    else:
        _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ParentView | SingleJobView | Problem | None:
    if response.status_code == 202:

        def _parse_response_202(data: object) -> ParentView | SingleJobView:
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                response_202_type_0 = SingleJobView.from_dict(data)

                return response_202_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            if not isinstance(data, dict):
                raise TypeError()
            response_202_type_1 = ParentView.from_dict(data)

            return response_202_type_1

        response_202 = _parse_response_202(response.json())

        return response_202

    if response.status_code == 400:
        response_400 = Problem.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = Problem.from_dict(response.json())

        return response_403

    if response.status_code == 413:
        response_413 = Problem.from_dict(response.json())

        return response_413

    if response.status_code == 414:
        response_414 = Problem.from_dict(response.json())

        return response_414

    if response.status_code == 415:
        response_415 = Problem.from_dict(response.json())

        return response_415

    if response.status_code == 422:
        response_422 = Problem.from_dict(response.json())

        return response_422

    if response.status_code == 429:
        response_429 = Problem.from_dict(response.json())

        return response_429

    if response.status_code == 431:
        response_431 = Problem.from_dict(response.json())

        return response_431

    if response.status_code == 500:
        response_500 = Problem.from_dict(response.json())

        return response_500

    if response.status_code == 503:
        response_503 = Problem.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[ParentView | SingleJobView | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: Group | Job,
    doc_hash: str | Unset = UNSET,
    model: CreateJobModel | Unset = UNSET,
    pages: int | Unset = UNSET,
    callback_url: str | Unset = UNSET,
    split_pages: int | Unset = UNSET,
    max_parallel: int | Unset = UNSET,
    on_prem: bool | Unset = UNSET,
    priority: CreateJobPriority | Unset = UNSET,
    webhook_events: str | Unset = UNSET,
    idempotency_key: str | Unset = UNSET,
) -> Response[ParentView | SingleJobView | Problem]:
    """Submit a document, a JSON job or a fan-out group

     Three shapes, told apart by the content type and the body:

    1. **A raw document**: the body is the file, `Content-Type` its type. Query: `model` (default
    `tesseract`), `doc_hash` (default: the body's sha256), `pages`.
    2. **A JSON job** (`Job`).
    3. **A JSON fan-out group** (`Group`): JSON with a top-level `fanout`.

    **PDF split.** A PDF with `split_pages` (the query of a raw PDF, or a JSON job's field) becomes a
    fan-out group of page ranges, `split_pages` pages a child, at most `max_parallel` running at once (0
    or absent: no cap). The page count is read at submission: a PDF that cannot be read is
    `invalid_document`, one over `OCRGW_MAX_PAGES` pages `too_many_pages`, one that makes more than
    `OCRGW_MAX_CHILDREN` children `too_many_children`, and `split_pages` on anything but a PDF
    `invalid_field`. Each child stores its own pages only and numbers them in the whole document
    (`options.first_page`).

    The whole submission is validated before anything is stored: a rejected request stores nothing, and
    a group with one bad child is rejected whole, the problem naming it (`child_index`). With
    `Idempotency-Key`, the same request again answers the same job (`Idempotent-Replayed: true`); the
    same key with another request is `idempotency_key_reused`.

    Args:
        doc_hash (str | Unset):
        model (CreateJobModel | Unset):
        pages (int | Unset):
        callback_url (str | Unset):
        split_pages (int | Unset):
        max_parallel (int | Unset):
        on_prem (bool | Unset):
        priority (CreateJobPriority | Unset):
        webhook_events (str | Unset):  Example: job.completed,child.completed.
        idempotency_key (str | Unset):
        body (Group | Job):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ParentView | SingleJobView | Problem]
    """

    kwargs = _get_kwargs(
        body=body,
        doc_hash=doc_hash,
        model=model,
        pages=pages,
        callback_url=callback_url,
        split_pages=split_pages,
        max_parallel=max_parallel,
        on_prem=on_prem,
        priority=priority,
        webhook_events=webhook_events,
        idempotency_key=idempotency_key,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    body: Group | Job,
    doc_hash: str | Unset = UNSET,
    model: CreateJobModel | Unset = UNSET,
    pages: int | Unset = UNSET,
    callback_url: str | Unset = UNSET,
    split_pages: int | Unset = UNSET,
    max_parallel: int | Unset = UNSET,
    on_prem: bool | Unset = UNSET,
    priority: CreateJobPriority | Unset = UNSET,
    webhook_events: str | Unset = UNSET,
    idempotency_key: str | Unset = UNSET,
) -> ParentView | SingleJobView | Problem | None:
    """Submit a document, a JSON job or a fan-out group

     Three shapes, told apart by the content type and the body:

    1. **A raw document**: the body is the file, `Content-Type` its type. Query: `model` (default
    `tesseract`), `doc_hash` (default: the body's sha256), `pages`.
    2. **A JSON job** (`Job`).
    3. **A JSON fan-out group** (`Group`): JSON with a top-level `fanout`.

    **PDF split.** A PDF with `split_pages` (the query of a raw PDF, or a JSON job's field) becomes a
    fan-out group of page ranges, `split_pages` pages a child, at most `max_parallel` running at once (0
    or absent: no cap). The page count is read at submission: a PDF that cannot be read is
    `invalid_document`, one over `OCRGW_MAX_PAGES` pages `too_many_pages`, one that makes more than
    `OCRGW_MAX_CHILDREN` children `too_many_children`, and `split_pages` on anything but a PDF
    `invalid_field`. Each child stores its own pages only and numbers them in the whole document
    (`options.first_page`).

    The whole submission is validated before anything is stored: a rejected request stores nothing, and
    a group with one bad child is rejected whole, the problem naming it (`child_index`). With
    `Idempotency-Key`, the same request again answers the same job (`Idempotent-Replayed: true`); the
    same key with another request is `idempotency_key_reused`.

    Args:
        doc_hash (str | Unset):
        model (CreateJobModel | Unset):
        pages (int | Unset):
        callback_url (str | Unset):
        split_pages (int | Unset):
        max_parallel (int | Unset):
        on_prem (bool | Unset):
        priority (CreateJobPriority | Unset):
        webhook_events (str | Unset):  Example: job.completed,child.completed.
        idempotency_key (str | Unset):
        body (Group | Job):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ParentView | SingleJobView | Problem
    """

    return sync_detailed(
        client=client,
        body=body,
        doc_hash=doc_hash,
        model=model,
        pages=pages,
        callback_url=callback_url,
        split_pages=split_pages,
        max_parallel=max_parallel,
        on_prem=on_prem,
        priority=priority,
        webhook_events=webhook_events,
        idempotency_key=idempotency_key,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: Group | Job,
    doc_hash: str | Unset = UNSET,
    model: CreateJobModel | Unset = UNSET,
    pages: int | Unset = UNSET,
    callback_url: str | Unset = UNSET,
    split_pages: int | Unset = UNSET,
    max_parallel: int | Unset = UNSET,
    on_prem: bool | Unset = UNSET,
    priority: CreateJobPriority | Unset = UNSET,
    webhook_events: str | Unset = UNSET,
    idempotency_key: str | Unset = UNSET,
) -> Response[ParentView | SingleJobView | Problem]:
    """Submit a document, a JSON job or a fan-out group

     Three shapes, told apart by the content type and the body:

    1. **A raw document**: the body is the file, `Content-Type` its type. Query: `model` (default
    `tesseract`), `doc_hash` (default: the body's sha256), `pages`.
    2. **A JSON job** (`Job`).
    3. **A JSON fan-out group** (`Group`): JSON with a top-level `fanout`.

    **PDF split.** A PDF with `split_pages` (the query of a raw PDF, or a JSON job's field) becomes a
    fan-out group of page ranges, `split_pages` pages a child, at most `max_parallel` running at once (0
    or absent: no cap). The page count is read at submission: a PDF that cannot be read is
    `invalid_document`, one over `OCRGW_MAX_PAGES` pages `too_many_pages`, one that makes more than
    `OCRGW_MAX_CHILDREN` children `too_many_children`, and `split_pages` on anything but a PDF
    `invalid_field`. Each child stores its own pages only and numbers them in the whole document
    (`options.first_page`).

    The whole submission is validated before anything is stored: a rejected request stores nothing, and
    a group with one bad child is rejected whole, the problem naming it (`child_index`). With
    `Idempotency-Key`, the same request again answers the same job (`Idempotent-Replayed: true`); the
    same key with another request is `idempotency_key_reused`.

    Args:
        doc_hash (str | Unset):
        model (CreateJobModel | Unset):
        pages (int | Unset):
        callback_url (str | Unset):
        split_pages (int | Unset):
        max_parallel (int | Unset):
        on_prem (bool | Unset):
        priority (CreateJobPriority | Unset):
        webhook_events (str | Unset):  Example: job.completed,child.completed.
        idempotency_key (str | Unset):
        body (Group | Job):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ParentView | SingleJobView | Problem]
    """

    kwargs = _get_kwargs(
        body=body,
        doc_hash=doc_hash,
        model=model,
        pages=pages,
        callback_url=callback_url,
        split_pages=split_pages,
        max_parallel=max_parallel,
        on_prem=on_prem,
        priority=priority,
        webhook_events=webhook_events,
        idempotency_key=idempotency_key,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    body: Group | Job,
    doc_hash: str | Unset = UNSET,
    model: CreateJobModel | Unset = UNSET,
    pages: int | Unset = UNSET,
    callback_url: str | Unset = UNSET,
    split_pages: int | Unset = UNSET,
    max_parallel: int | Unset = UNSET,
    on_prem: bool | Unset = UNSET,
    priority: CreateJobPriority | Unset = UNSET,
    webhook_events: str | Unset = UNSET,
    idempotency_key: str | Unset = UNSET,
) -> ParentView | SingleJobView | Problem | None:
    """Submit a document, a JSON job or a fan-out group

     Three shapes, told apart by the content type and the body:

    1. **A raw document**: the body is the file, `Content-Type` its type. Query: `model` (default
    `tesseract`), `doc_hash` (default: the body's sha256), `pages`.
    2. **A JSON job** (`Job`).
    3. **A JSON fan-out group** (`Group`): JSON with a top-level `fanout`.

    **PDF split.** A PDF with `split_pages` (the query of a raw PDF, or a JSON job's field) becomes a
    fan-out group of page ranges, `split_pages` pages a child, at most `max_parallel` running at once (0
    or absent: no cap). The page count is read at submission: a PDF that cannot be read is
    `invalid_document`, one over `OCRGW_MAX_PAGES` pages `too_many_pages`, one that makes more than
    `OCRGW_MAX_CHILDREN` children `too_many_children`, and `split_pages` on anything but a PDF
    `invalid_field`. Each child stores its own pages only and numbers them in the whole document
    (`options.first_page`).

    The whole submission is validated before anything is stored: a rejected request stores nothing, and
    a group with one bad child is rejected whole, the problem naming it (`child_index`). With
    `Idempotency-Key`, the same request again answers the same job (`Idempotent-Replayed: true`); the
    same key with another request is `idempotency_key_reused`.

    Args:
        doc_hash (str | Unset):
        model (CreateJobModel | Unset):
        pages (int | Unset):
        callback_url (str | Unset):
        split_pages (int | Unset):
        max_parallel (int | Unset):
        on_prem (bool | Unset):
        priority (CreateJobPriority | Unset):
        webhook_events (str | Unset):  Example: job.completed,child.completed.
        idempotency_key (str | Unset):
        body (Group | Job):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ParentView | SingleJobView | Problem
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
            doc_hash=doc_hash,
            model=model,
            pages=pages,
            callback_url=callback_url,
            split_pages=split_pages,
            max_parallel=max_parallel,
            on_prem=on_prem,
            priority=priority,
            webhook_events=webhook_events,
            idempotency_key=idempotency_key,
        )
    ).parsed
