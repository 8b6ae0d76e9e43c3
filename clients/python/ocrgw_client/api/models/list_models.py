from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.list_models_response_400 import ListModelsResponse400
from ...models.list_models_response_401 import ListModelsResponse401
from ...models.list_models_response_414 import ListModelsResponse414
from ...models.list_models_response_431 import ListModelsResponse431
from ...models.list_models_response_500 import ListModelsResponse500
from ...models.models import Models
from ...types import Response


def _get_kwargs() -> dict[str, Any]:

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/models",
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> (
    ListModelsResponse400
    | ListModelsResponse401
    | ListModelsResponse414
    | ListModelsResponse431
    | ListModelsResponse500
    | Models
    | None
):
    if response.status_code == 200:
        response_200 = Models.from_dict(response.json())

        return response_200

    if response.status_code == 400:
        response_400 = ListModelsResponse400.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = ListModelsResponse401.from_dict(response.json())

        return response_401

    if response.status_code == 414:
        response_414 = ListModelsResponse414.from_dict(response.json())

        return response_414

    if response.status_code == 431:
        response_431 = ListModelsResponse431.from_dict(response.json())

        return response_431

    if response.status_code == 500:
        response_500 = ListModelsResponse500.from_dict(response.json())

        return response_500

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[
    ListModelsResponse400
    | ListModelsResponse401
    | ListModelsResponse414
    | ListModelsResponse431
    | ListModelsResponse500
    | Models
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
) -> Response[
    ListModelsResponse400
    | ListModelsResponse401
    | ListModelsResponse414
    | ListModelsResponse431
    | ListModelsResponse500
    | Models
]:
    """The models: engine, where it runs, the content types and options it takes, the languages of the live
    workers

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ListModelsResponse400 | ListModelsResponse401 | ListModelsResponse414 | ListModelsResponse431 | ListModelsResponse500 | Models]
    """

    kwargs = _get_kwargs()

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
) -> (
    ListModelsResponse400
    | ListModelsResponse401
    | ListModelsResponse414
    | ListModelsResponse431
    | ListModelsResponse500
    | Models
    | None
):
    """The models: engine, where it runs, the content types and options it takes, the languages of the live
    workers

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ListModelsResponse400 | ListModelsResponse401 | ListModelsResponse414 | ListModelsResponse431 | ListModelsResponse500 | Models
    """

    return sync_detailed(
        client=client,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
) -> Response[
    ListModelsResponse400
    | ListModelsResponse401
    | ListModelsResponse414
    | ListModelsResponse431
    | ListModelsResponse500
    | Models
]:
    """The models: engine, where it runs, the content types and options it takes, the languages of the live
    workers

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ListModelsResponse400 | ListModelsResponse401 | ListModelsResponse414 | ListModelsResponse431 | ListModelsResponse500 | Models]
    """

    kwargs = _get_kwargs()

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
) -> (
    ListModelsResponse400
    | ListModelsResponse401
    | ListModelsResponse414
    | ListModelsResponse431
    | ListModelsResponse500
    | Models
    | None
):
    """The models: engine, where it runs, the content types and options it takes, the languages of the live
    workers

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ListModelsResponse400 | ListModelsResponse401 | ListModelsResponse414 | ListModelsResponse431 | ListModelsResponse500 | Models
    """

    return (
        await asyncio_detailed(
            client=client,
        )
    ).parsed
