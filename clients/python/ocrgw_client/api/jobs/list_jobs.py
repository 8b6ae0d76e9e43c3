from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.job_list import JobList
from ...models.list_jobs_kind import ListJobsKind
from ...models.list_jobs_response_400 import ListJobsResponse400
from ...models.list_jobs_response_401 import ListJobsResponse401
from ...models.list_jobs_response_414 import ListJobsResponse414
from ...models.list_jobs_response_422 import ListJobsResponse422
from ...models.list_jobs_response_431 import ListJobsResponse431
from ...models.list_jobs_response_500 import ListJobsResponse500
from ...models.list_jobs_response_503 import ListJobsResponse503
from ...models.list_jobs_status import ListJobsStatus
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    status: ListJobsStatus | Unset = UNSET,
    kind: ListJobsKind | Unset = UNSET,
    limit: int | Unset = 20,
    cursor: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    json_status: str | Unset = UNSET
    if not isinstance(status, Unset):
        json_status = status.value

    params["status"] = json_status

    json_kind: str | Unset = UNSET
    if not isinstance(kind, Unset):
        json_kind = kind.value

    params["kind"] = json_kind

    params["limit"] = limit

    params["cursor"] = cursor

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/jobs",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> (
    JobList
    | ListJobsResponse400
    | ListJobsResponse401
    | ListJobsResponse414
    | ListJobsResponse422
    | ListJobsResponse431
    | ListJobsResponse500
    | ListJobsResponse503
    | None
):
    if response.status_code == 200:
        response_200 = JobList.from_dict(response.json())

        return response_200

    if response.status_code == 400:
        response_400 = ListJobsResponse400.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = ListJobsResponse401.from_dict(response.json())

        return response_401

    if response.status_code == 414:
        response_414 = ListJobsResponse414.from_dict(response.json())

        return response_414

    if response.status_code == 422:
        response_422 = ListJobsResponse422.from_dict(response.json())

        return response_422

    if response.status_code == 431:
        response_431 = ListJobsResponse431.from_dict(response.json())

        return response_431

    if response.status_code == 500:
        response_500 = ListJobsResponse500.from_dict(response.json())

        return response_500

    if response.status_code == 503:
        response_503 = ListJobsResponse503.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[
    JobList
    | ListJobsResponse400
    | ListJobsResponse401
    | ListJobsResponse414
    | ListJobsResponse422
    | ListJobsResponse431
    | ListJobsResponse500
    | ListJobsResponse503
]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    status: ListJobsStatus | Unset = UNSET,
    kind: ListJobsKind | Unset = UNSET,
    limit: int | Unset = 20,
    cursor: str | Unset = UNSET,
) -> Response[
    JobList
    | ListJobsResponse400
    | ListJobsResponse401
    | ListJobsResponse414
    | ListJobsResponse422
    | ListJobsResponse431
    | ListJobsResponse500
    | ListJobsResponse503
]:
    """List the tenant's single jobs and parents, newest first

    Args:
        status (ListJobsStatus | Unset):
        kind (ListJobsKind | Unset):
        limit (int | Unset):  Default: 20.
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[JobList | ListJobsResponse400 | ListJobsResponse401 | ListJobsResponse414 | ListJobsResponse422 | ListJobsResponse431 | ListJobsResponse500 | ListJobsResponse503]
    """

    kwargs = _get_kwargs(
        status=status,
        kind=kind,
        limit=limit,
        cursor=cursor,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    status: ListJobsStatus | Unset = UNSET,
    kind: ListJobsKind | Unset = UNSET,
    limit: int | Unset = 20,
    cursor: str | Unset = UNSET,
) -> (
    JobList
    | ListJobsResponse400
    | ListJobsResponse401
    | ListJobsResponse414
    | ListJobsResponse422
    | ListJobsResponse431
    | ListJobsResponse500
    | ListJobsResponse503
    | None
):
    """List the tenant's single jobs and parents, newest first

    Args:
        status (ListJobsStatus | Unset):
        kind (ListJobsKind | Unset):
        limit (int | Unset):  Default: 20.
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        JobList | ListJobsResponse400 | ListJobsResponse401 | ListJobsResponse414 | ListJobsResponse422 | ListJobsResponse431 | ListJobsResponse500 | ListJobsResponse503
    """

    return sync_detailed(
        client=client,
        status=status,
        kind=kind,
        limit=limit,
        cursor=cursor,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    status: ListJobsStatus | Unset = UNSET,
    kind: ListJobsKind | Unset = UNSET,
    limit: int | Unset = 20,
    cursor: str | Unset = UNSET,
) -> Response[
    JobList
    | ListJobsResponse400
    | ListJobsResponse401
    | ListJobsResponse414
    | ListJobsResponse422
    | ListJobsResponse431
    | ListJobsResponse500
    | ListJobsResponse503
]:
    """List the tenant's single jobs and parents, newest first

    Args:
        status (ListJobsStatus | Unset):
        kind (ListJobsKind | Unset):
        limit (int | Unset):  Default: 20.
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[JobList | ListJobsResponse400 | ListJobsResponse401 | ListJobsResponse414 | ListJobsResponse422 | ListJobsResponse431 | ListJobsResponse500 | ListJobsResponse503]
    """

    kwargs = _get_kwargs(
        status=status,
        kind=kind,
        limit=limit,
        cursor=cursor,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    status: ListJobsStatus | Unset = UNSET,
    kind: ListJobsKind | Unset = UNSET,
    limit: int | Unset = 20,
    cursor: str | Unset = UNSET,
) -> (
    JobList
    | ListJobsResponse400
    | ListJobsResponse401
    | ListJobsResponse414
    | ListJobsResponse422
    | ListJobsResponse431
    | ListJobsResponse500
    | ListJobsResponse503
    | None
):
    """List the tenant's single jobs and parents, newest first

    Args:
        status (ListJobsStatus | Unset):
        kind (ListJobsKind | Unset):
        limit (int | Unset):  Default: 20.
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        JobList | ListJobsResponse400 | ListJobsResponse401 | ListJobsResponse414 | ListJobsResponse422 | ListJobsResponse431 | ListJobsResponse500 | ListJobsResponse503
    """

    return (
        await asyncio_detailed(
            client=client,
            status=status,
            kind=kind,
            limit=limit,
            cursor=cursor,
        )
    ).parsed
