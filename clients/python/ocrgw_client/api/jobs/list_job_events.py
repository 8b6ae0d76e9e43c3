from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.events import Events
from ...models.list_job_events_response_400 import ListJobEventsResponse400
from ...models.list_job_events_response_401 import ListJobEventsResponse401
from ...models.list_job_events_response_404 import ListJobEventsResponse404
from ...models.list_job_events_response_414 import ListJobEventsResponse414
from ...models.list_job_events_response_429 import ListJobEventsResponse429
from ...models.list_job_events_response_431 import ListJobEventsResponse431
from ...models.list_job_events_response_500 import ListJobEventsResponse500
from ...models.list_job_events_response_503 import ListJobEventsResponse503
from ...types import UNSET, Response, Unset


def _get_kwargs(
    job_id: str,
    *,
    last_event_id: str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(last_event_id, Unset):
        headers["Last-Event-ID"] = last_event_id

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/jobs/{job_id}/events".format(
            job_id=quote(str(job_id), safe=""),
        ),
    }

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> (
    Events
    | ListJobEventsResponse400
    | ListJobEventsResponse401
    | ListJobEventsResponse404
    | ListJobEventsResponse414
    | ListJobEventsResponse429
    | ListJobEventsResponse431
    | ListJobEventsResponse500
    | ListJobEventsResponse503
    | None
):
    if response.status_code == 200:
        response_200 = Events.from_dict(response.json())

        return response_200

    if response.status_code == 400:
        response_400 = ListJobEventsResponse400.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = ListJobEventsResponse401.from_dict(response.json())

        return response_401

    if response.status_code == 404:
        response_404 = ListJobEventsResponse404.from_dict(response.json())

        return response_404

    if response.status_code == 414:
        response_414 = ListJobEventsResponse414.from_dict(response.json())

        return response_414

    if response.status_code == 429:
        response_429 = ListJobEventsResponse429.from_dict(response.json())

        return response_429

    if response.status_code == 431:
        response_431 = ListJobEventsResponse431.from_dict(response.json())

        return response_431

    if response.status_code == 500:
        response_500 = ListJobEventsResponse500.from_dict(response.json())

        return response_500

    if response.status_code == 503:
        response_503 = ListJobEventsResponse503.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[
    Events
    | ListJobEventsResponse400
    | ListJobEventsResponse401
    | ListJobEventsResponse404
    | ListJobEventsResponse414
    | ListJobEventsResponse429
    | ListJobEventsResponse431
    | ListJobEventsResponse500
    | ListJobEventsResponse503
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
    last_event_id: str | Unset = UNSET,
) -> Response[
    Events
    | ListJobEventsResponse400
    | ListJobEventsResponse401
    | ListJobEventsResponse404
    | ListJobEventsResponse414
    | ListJobEventsResponse429
    | ListJobEventsResponse431
    | ListJobEventsResponse500
    | ListJobEventsResponse503
]:
    """A job's audit events, oldest first (a parent's include its children's); or its live stream

    Args:
        job_id (str):
        last_event_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Events | ListJobEventsResponse400 | ListJobEventsResponse401 | ListJobEventsResponse404 | ListJobEventsResponse414 | ListJobEventsResponse429 | ListJobEventsResponse431 | ListJobEventsResponse500 | ListJobEventsResponse503]
    """

    kwargs = _get_kwargs(
        job_id=job_id,
        last_event_id=last_event_id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    job_id: str,
    *,
    client: AuthenticatedClient | Client,
    last_event_id: str | Unset = UNSET,
) -> (
    Events
    | ListJobEventsResponse400
    | ListJobEventsResponse401
    | ListJobEventsResponse404
    | ListJobEventsResponse414
    | ListJobEventsResponse429
    | ListJobEventsResponse431
    | ListJobEventsResponse500
    | ListJobEventsResponse503
    | None
):
    """A job's audit events, oldest first (a parent's include its children's); or its live stream

    Args:
        job_id (str):
        last_event_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Events | ListJobEventsResponse400 | ListJobEventsResponse401 | ListJobEventsResponse404 | ListJobEventsResponse414 | ListJobEventsResponse429 | ListJobEventsResponse431 | ListJobEventsResponse500 | ListJobEventsResponse503
    """

    return sync_detailed(
        job_id=job_id,
        client=client,
        last_event_id=last_event_id,
    ).parsed


async def asyncio_detailed(
    job_id: str,
    *,
    client: AuthenticatedClient | Client,
    last_event_id: str | Unset = UNSET,
) -> Response[
    Events
    | ListJobEventsResponse400
    | ListJobEventsResponse401
    | ListJobEventsResponse404
    | ListJobEventsResponse414
    | ListJobEventsResponse429
    | ListJobEventsResponse431
    | ListJobEventsResponse500
    | ListJobEventsResponse503
]:
    """A job's audit events, oldest first (a parent's include its children's); or its live stream

    Args:
        job_id (str):
        last_event_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Events | ListJobEventsResponse400 | ListJobEventsResponse401 | ListJobEventsResponse404 | ListJobEventsResponse414 | ListJobEventsResponse429 | ListJobEventsResponse431 | ListJobEventsResponse500 | ListJobEventsResponse503]
    """

    kwargs = _get_kwargs(
        job_id=job_id,
        last_event_id=last_event_id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    job_id: str,
    *,
    client: AuthenticatedClient | Client,
    last_event_id: str | Unset = UNSET,
) -> (
    Events
    | ListJobEventsResponse400
    | ListJobEventsResponse401
    | ListJobEventsResponse404
    | ListJobEventsResponse414
    | ListJobEventsResponse429
    | ListJobEventsResponse431
    | ListJobEventsResponse500
    | ListJobEventsResponse503
    | None
):
    """A job's audit events, oldest first (a parent's include its children's); or its live stream

    Args:
        job_id (str):
        last_event_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Events | ListJobEventsResponse400 | ListJobEventsResponse401 | ListJobEventsResponse404 | ListJobEventsResponse414 | ListJobEventsResponse429 | ListJobEventsResponse431 | ListJobEventsResponse500 | ListJobEventsResponse503
    """

    return (
        await asyncio_detailed(
            job_id=job_id,
            client=client,
            last_event_id=last_event_id,
        )
    ).parsed
