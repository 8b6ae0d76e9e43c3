from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.get_result_pdf_optimize import GetResultPdfOptimize
from ...models.get_result_pdf_output_type import GetResultPdfOutputType
from ...models.get_result_pdf_response_202 import GetResultPdfResponse202
from ...models.problem import Problem
from ...types import UNSET, Response, Unset


def _get_kwargs(
    job_id: str,
    *,
    output_type: GetResultPdfOutputType | Unset = UNSET,
    optimize: GetResultPdfOptimize | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    json_output_type: str | Unset = UNSET
    if not isinstance(output_type, Unset):
        json_output_type = output_type.value

    params["output_type"] = json_output_type

    json_optimize: int | Unset = UNSET
    if not isinstance(optimize, Unset):
        json_optimize = optimize.value

    params["optimize"] = json_optimize

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/jobs/{job_id}/result.pdf".format(
            job_id=quote(str(job_id), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> GetResultPdfResponse202 | Problem | None:
    if response.status_code == 202:
        response_202 = GetResultPdfResponse202.from_dict(response.json())

        return response_202

    if response.status_code == 400:
        response_400 = Problem.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())

        return response_401

    if response.status_code == 404:
        response_404 = Problem.from_dict(response.json())

        return response_404

    if response.status_code == 409:
        response_409 = Problem.from_dict(response.json())

        return response_409

    if response.status_code == 414:
        response_414 = Problem.from_dict(response.json())

        return response_414

    if response.status_code == 422:
        response_422 = Problem.from_dict(response.json())

        return response_422

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
) -> Response[GetResultPdfResponse202 | Problem]:
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
    output_type: GetResultPdfOutputType | Unset = UNSET,
    optimize: GetResultPdfOptimize | Unset = UNSET,
) -> Response[GetResultPdfResponse202 | Problem]:
    """A completed job's searchable PDF; a terminal parent's holds its completed children's pages in order

    Args:
        job_id (str):
        output_type (GetResultPdfOutputType | Unset):
        optimize (GetResultPdfOptimize | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[GetResultPdfResponse202 | Problem]
    """

    kwargs = _get_kwargs(
        job_id=job_id,
        output_type=output_type,
        optimize=optimize,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    job_id: str,
    *,
    client: AuthenticatedClient | Client,
    output_type: GetResultPdfOutputType | Unset = UNSET,
    optimize: GetResultPdfOptimize | Unset = UNSET,
) -> GetResultPdfResponse202 | Problem | None:
    """A completed job's searchable PDF; a terminal parent's holds its completed children's pages in order

    Args:
        job_id (str):
        output_type (GetResultPdfOutputType | Unset):
        optimize (GetResultPdfOptimize | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        GetResultPdfResponse202 | Problem
    """

    return sync_detailed(
        job_id=job_id,
        client=client,
        output_type=output_type,
        optimize=optimize,
    ).parsed


async def asyncio_detailed(
    job_id: str,
    *,
    client: AuthenticatedClient | Client,
    output_type: GetResultPdfOutputType | Unset = UNSET,
    optimize: GetResultPdfOptimize | Unset = UNSET,
) -> Response[GetResultPdfResponse202 | Problem]:
    """A completed job's searchable PDF; a terminal parent's holds its completed children's pages in order

    Args:
        job_id (str):
        output_type (GetResultPdfOutputType | Unset):
        optimize (GetResultPdfOptimize | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[GetResultPdfResponse202 | Problem]
    """

    kwargs = _get_kwargs(
        job_id=job_id,
        output_type=output_type,
        optimize=optimize,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    job_id: str,
    *,
    client: AuthenticatedClient | Client,
    output_type: GetResultPdfOutputType | Unset = UNSET,
    optimize: GetResultPdfOptimize | Unset = UNSET,
) -> GetResultPdfResponse202 | Problem | None:
    """A completed job's searchable PDF; a terminal parent's holds its completed children's pages in order

    Args:
        job_id (str):
        output_type (GetResultPdfOutputType | Unset):
        optimize (GetResultPdfOptimize | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        GetResultPdfResponse202 | Problem
    """

    return (
        await asyncio_detailed(
            job_id=job_id,
            client=client,
            output_type=output_type,
            optimize=optimize,
        )
    ).parsed
