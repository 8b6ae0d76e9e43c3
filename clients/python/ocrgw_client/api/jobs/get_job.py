from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.get_job_children import GetJobChildren
from ...models.parent_view import ParentView
from ...models.problem import Problem
from ...models.single_job_view import SingleJobView
from ...types import UNSET, Response, Unset


def _get_kwargs(
    job_id: str,
    *,
    children: GetJobChildren | Unset = GetJobChildren.PAGE,
    offset: int | Unset = 0,
    limit: int | Unset = 20,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    json_children: str | Unset = UNSET
    if not isinstance(children, Unset):
        json_children = children.value

    params["children"] = json_children

    params["offset"] = offset

    params["limit"] = limit

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/jobs/{job_id}".format(
            job_id=quote(str(job_id), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ParentView | SingleJobView | Problem | None:
    if response.status_code == 200:

        def _parse_response_200(data: object) -> ParentView | SingleJobView:
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                response_200_type_0 = SingleJobView.from_dict(data)

                return response_200_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            if not isinstance(data, dict):
                raise TypeError()
            response_200_type_1 = ParentView.from_dict(data)

            return response_200_type_1

        response_200 = _parse_response_200(response.json())

        return response_200

    if response.status_code == 400:
        response_400 = Problem.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())

        return response_401

    if response.status_code == 404:
        response_404 = Problem.from_dict(response.json())

        return response_404

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
) -> Response[ParentView | SingleJobView | Problem]:
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
    children: GetJobChildren | Unset = GetJobChildren.PAGE,
    offset: int | Unset = 0,
    limit: int | Unset = 20,
) -> Response[ParentView | SingleJobView | Problem]:
    """A job's view: a single job or a child with its result; a parent with a page of children

    Args:
        job_id (str):
        children (GetJobChildren | Unset):  Default: GetJobChildren.PAGE.
        offset (int | Unset):  Default: 0.
        limit (int | Unset):  Default: 20.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ParentView | SingleJobView | Problem]
    """

    kwargs = _get_kwargs(
        job_id=job_id,
        children=children,
        offset=offset,
        limit=limit,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    job_id: str,
    *,
    client: AuthenticatedClient | Client,
    children: GetJobChildren | Unset = GetJobChildren.PAGE,
    offset: int | Unset = 0,
    limit: int | Unset = 20,
) -> ParentView | SingleJobView | Problem | None:
    """A job's view: a single job or a child with its result; a parent with a page of children

    Args:
        job_id (str):
        children (GetJobChildren | Unset):  Default: GetJobChildren.PAGE.
        offset (int | Unset):  Default: 0.
        limit (int | Unset):  Default: 20.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ParentView | SingleJobView | Problem
    """

    return sync_detailed(
        job_id=job_id,
        client=client,
        children=children,
        offset=offset,
        limit=limit,
    ).parsed


async def asyncio_detailed(
    job_id: str,
    *,
    client: AuthenticatedClient | Client,
    children: GetJobChildren | Unset = GetJobChildren.PAGE,
    offset: int | Unset = 0,
    limit: int | Unset = 20,
) -> Response[ParentView | SingleJobView | Problem]:
    """A job's view: a single job or a child with its result; a parent with a page of children

    Args:
        job_id (str):
        children (GetJobChildren | Unset):  Default: GetJobChildren.PAGE.
        offset (int | Unset):  Default: 0.
        limit (int | Unset):  Default: 20.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ParentView | SingleJobView | Problem]
    """

    kwargs = _get_kwargs(
        job_id=job_id,
        children=children,
        offset=offset,
        limit=limit,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    job_id: str,
    *,
    client: AuthenticatedClient | Client,
    children: GetJobChildren | Unset = GetJobChildren.PAGE,
    offset: int | Unset = 0,
    limit: int | Unset = 20,
) -> ParentView | SingleJobView | Problem | None:
    """A job's view: a single job or a child with its result; a parent with a page of children

    Args:
        job_id (str):
        children (GetJobChildren | Unset):  Default: GetJobChildren.PAGE.
        offset (int | Unset):  Default: 0.
        limit (int | Unset):  Default: 20.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ParentView | SingleJobView | Problem
    """

    return (
        await asyncio_detailed(
            job_id=job_id,
            client=client,
            children=children,
            offset=offset,
            limit=limit,
        )
    ).parsed
