from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.get_result_response_400 import GetResultResponse400
from ...models.get_result_response_401 import GetResultResponse401
from ...models.get_result_response_404 import GetResultResponse404
from ...models.get_result_response_409 import GetResultResponse409
from ...models.get_result_response_414 import GetResultResponse414
from ...models.get_result_response_431 import GetResultResponse431
from ...models.get_result_response_500 import GetResultResponse500
from ...models.get_result_response_503 import GetResultResponse503
from ...models.merged_result import MergedResult
from ...models.result import Result
from ...types import Response


def _get_kwargs(
    job_id: str,
) -> dict[str, Any]:

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/jobs/{job_id}/result".format(
            job_id=quote(str(job_id), safe=""),
        ),
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> (
    GetResultResponse400
    | GetResultResponse401
    | GetResultResponse404
    | GetResultResponse409
    | GetResultResponse414
    | GetResultResponse431
    | GetResultResponse500
    | GetResultResponse503
    | MergedResult
    | Result
    | None
):
    if response.status_code == 200:

        def _parse_response_200(data: object) -> MergedResult | Result:
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                response_200_type_0 = Result.from_dict(data)

                return response_200_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            if not isinstance(data, dict):
                raise TypeError()
            response_200_type_1 = MergedResult.from_dict(data)

            return response_200_type_1

        response_200 = _parse_response_200(response.json())

        return response_200

    if response.status_code == 400:
        response_400 = GetResultResponse400.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = GetResultResponse401.from_dict(response.json())

        return response_401

    if response.status_code == 404:
        response_404 = GetResultResponse404.from_dict(response.json())

        return response_404

    if response.status_code == 409:
        response_409 = GetResultResponse409.from_dict(response.json())

        return response_409

    if response.status_code == 414:
        response_414 = GetResultResponse414.from_dict(response.json())

        return response_414

    if response.status_code == 431:
        response_431 = GetResultResponse431.from_dict(response.json())

        return response_431

    if response.status_code == 500:
        response_500 = GetResultResponse500.from_dict(response.json())

        return response_500

    if response.status_code == 503:
        response_503 = GetResultResponse503.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[
    GetResultResponse400
    | GetResultResponse401
    | GetResultResponse404
    | GetResultResponse409
    | GetResultResponse414
    | GetResultResponse431
    | GetResultResponse500
    | GetResultResponse503
    | MergedResult
    | Result
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
    GetResultResponse400
    | GetResultResponse401
    | GetResultResponse404
    | GetResultResponse409
    | GetResultResponse414
    | GetResultResponse431
    | GetResultResponse500
    | GetResultResponse503
    | MergedResult
    | Result
]:
    """A job's result: a completed single job's or child's, a terminal parent's merged one

    Args:
        job_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[GetResultResponse400 | GetResultResponse401 | GetResultResponse404 | GetResultResponse409 | GetResultResponse414 | GetResultResponse431 | GetResultResponse500 | GetResultResponse503 | MergedResult | Result]
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
    GetResultResponse400
    | GetResultResponse401
    | GetResultResponse404
    | GetResultResponse409
    | GetResultResponse414
    | GetResultResponse431
    | GetResultResponse500
    | GetResultResponse503
    | MergedResult
    | Result
    | None
):
    """A job's result: a completed single job's or child's, a terminal parent's merged one

    Args:
        job_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        GetResultResponse400 | GetResultResponse401 | GetResultResponse404 | GetResultResponse409 | GetResultResponse414 | GetResultResponse431 | GetResultResponse500 | GetResultResponse503 | MergedResult | Result
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
    GetResultResponse400
    | GetResultResponse401
    | GetResultResponse404
    | GetResultResponse409
    | GetResultResponse414
    | GetResultResponse431
    | GetResultResponse500
    | GetResultResponse503
    | MergedResult
    | Result
]:
    """A job's result: a completed single job's or child's, a terminal parent's merged one

    Args:
        job_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[GetResultResponse400 | GetResultResponse401 | GetResultResponse404 | GetResultResponse409 | GetResultResponse414 | GetResultResponse431 | GetResultResponse500 | GetResultResponse503 | MergedResult | Result]
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
    GetResultResponse400
    | GetResultResponse401
    | GetResultResponse404
    | GetResultResponse409
    | GetResultResponse414
    | GetResultResponse431
    | GetResultResponse500
    | GetResultResponse503
    | MergedResult
    | Result
    | None
):
    """A job's result: a completed single job's or child's, a terminal parent's merged one

    Args:
        job_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        GetResultResponse400 | GetResultResponse401 | GetResultResponse404 | GetResultResponse409 | GetResultResponse414 | GetResultResponse431 | GetResultResponse500 | GetResultResponse503 | MergedResult | Result
    """

    return (
        await asyncio_detailed(
            job_id=job_id,
            client=client,
        )
    ).parsed
