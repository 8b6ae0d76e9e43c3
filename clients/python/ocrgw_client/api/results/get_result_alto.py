from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.get_result_alto_response_400 import GetResultAltoResponse400
from ...models.get_result_alto_response_401 import GetResultAltoResponse401
from ...models.get_result_alto_response_404 import GetResultAltoResponse404
from ...models.get_result_alto_response_409 import GetResultAltoResponse409
from ...models.get_result_alto_response_414 import GetResultAltoResponse414
from ...models.get_result_alto_response_431 import GetResultAltoResponse431
from ...models.get_result_alto_response_500 import GetResultAltoResponse500
from ...models.get_result_alto_response_503 import GetResultAltoResponse503
from ...types import Response


def _get_kwargs(
    job_id: str,
) -> dict[str, Any]:

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/jobs/{job_id}/result.alto".format(
            job_id=quote(str(job_id), safe=""),
        ),
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> (
    GetResultAltoResponse400
    | GetResultAltoResponse401
    | GetResultAltoResponse404
    | GetResultAltoResponse409
    | GetResultAltoResponse414
    | GetResultAltoResponse431
    | GetResultAltoResponse500
    | GetResultAltoResponse503
    | None
):
    if response.status_code == 400:
        response_400 = GetResultAltoResponse400.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = GetResultAltoResponse401.from_dict(response.json())

        return response_401

    if response.status_code == 404:
        response_404 = GetResultAltoResponse404.from_dict(response.json())

        return response_404

    if response.status_code == 409:
        response_409 = GetResultAltoResponse409.from_dict(response.json())

        return response_409

    if response.status_code == 414:
        response_414 = GetResultAltoResponse414.from_dict(response.json())

        return response_414

    if response.status_code == 431:
        response_431 = GetResultAltoResponse431.from_dict(response.json())

        return response_431

    if response.status_code == 500:
        response_500 = GetResultAltoResponse500.from_dict(response.json())

        return response_500

    if response.status_code == 503:
        response_503 = GetResultAltoResponse503.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[
    GetResultAltoResponse400
    | GetResultAltoResponse401
    | GetResultAltoResponse404
    | GetResultAltoResponse409
    | GetResultAltoResponse414
    | GetResultAltoResponse431
    | GetResultAltoResponse500
    | GetResultAltoResponse503
]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    job_id: str,
    *,
    client: AuthenticatedClient | Client,
) -> Response[
    GetResultAltoResponse400
    | GetResultAltoResponse401
    | GetResultAltoResponse404
    | GetResultAltoResponse409
    | GetResultAltoResponse414
    | GetResultAltoResponse431
    | GetResultAltoResponse500
    | GetResultAltoResponse503
]:
    """A job's result as ALTO v4: a completed single job's or child's, a terminal parent's merged one

    Args:
        job_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[GetResultAltoResponse400 | GetResultAltoResponse401 | GetResultAltoResponse404 | GetResultAltoResponse409 | GetResultAltoResponse414 | GetResultAltoResponse431 | GetResultAltoResponse500 | GetResultAltoResponse503]
    """

    kwargs = _get_kwargs(
        job_id=job_id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    job_id: str,
    *,
    client: AuthenticatedClient | Client,
) -> (
    GetResultAltoResponse400
    | GetResultAltoResponse401
    | GetResultAltoResponse404
    | GetResultAltoResponse409
    | GetResultAltoResponse414
    | GetResultAltoResponse431
    | GetResultAltoResponse500
    | GetResultAltoResponse503
    | None
):
    """A job's result as ALTO v4: a completed single job's or child's, a terminal parent's merged one

    Args:
        job_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        GetResultAltoResponse400 | GetResultAltoResponse401 | GetResultAltoResponse404 | GetResultAltoResponse409 | GetResultAltoResponse414 | GetResultAltoResponse431 | GetResultAltoResponse500 | GetResultAltoResponse503
    """

    return sync_detailed(
        job_id=job_id,
        client=client,
    ).parsed


async def asyncio_detailed(
    job_id: str,
    *,
    client: AuthenticatedClient | Client,
) -> Response[
    GetResultAltoResponse400
    | GetResultAltoResponse401
    | GetResultAltoResponse404
    | GetResultAltoResponse409
    | GetResultAltoResponse414
    | GetResultAltoResponse431
    | GetResultAltoResponse500
    | GetResultAltoResponse503
]:
    """A job's result as ALTO v4: a completed single job's or child's, a terminal parent's merged one

    Args:
        job_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[GetResultAltoResponse400 | GetResultAltoResponse401 | GetResultAltoResponse404 | GetResultAltoResponse409 | GetResultAltoResponse414 | GetResultAltoResponse431 | GetResultAltoResponse500 | GetResultAltoResponse503]
    """

    kwargs = _get_kwargs(
        job_id=job_id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    job_id: str,
    *,
    client: AuthenticatedClient | Client,
) -> (
    GetResultAltoResponse400
    | GetResultAltoResponse401
    | GetResultAltoResponse404
    | GetResultAltoResponse409
    | GetResultAltoResponse414
    | GetResultAltoResponse431
    | GetResultAltoResponse500
    | GetResultAltoResponse503
    | None
):
    """A job's result as ALTO v4: a completed single job's or child's, a terminal parent's merged one

    Args:
        job_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        GetResultAltoResponse400 | GetResultAltoResponse401 | GetResultAltoResponse404 | GetResultAltoResponse409 | GetResultAltoResponse414 | GetResultAltoResponse431 | GetResultAltoResponse500 | GetResultAltoResponse503
    """

    return (
        await asyncio_detailed(
            job_id=job_id,
            client=client,
        )
    ).parsed
