from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.cap import Cap
from ...models.parent_view import ParentView
from ...models.set_job_cap_response_400 import SetJobCapResponse400
from ...models.set_job_cap_response_401 import SetJobCapResponse401
from ...models.set_job_cap_response_403 import SetJobCapResponse403
from ...models.set_job_cap_response_404 import SetJobCapResponse404
from ...models.set_job_cap_response_409 import SetJobCapResponse409
from ...models.set_job_cap_response_413 import SetJobCapResponse413
from ...models.set_job_cap_response_414 import SetJobCapResponse414
from ...models.set_job_cap_response_415 import SetJobCapResponse415
from ...models.set_job_cap_response_422 import SetJobCapResponse422
from ...models.set_job_cap_response_429 import SetJobCapResponse429
from ...models.set_job_cap_response_431 import SetJobCapResponse431
from ...models.set_job_cap_response_500 import SetJobCapResponse500
from ...models.set_job_cap_response_503 import SetJobCapResponse503
from ...types import Response


def _get_kwargs(
    job_id: str,
    *,
    body: Cap,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "patch",
        "url": "/jobs/{job_id}".format(
            job_id=quote(str(job_id), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> (
    ParentView
    | SetJobCapResponse400
    | SetJobCapResponse401
    | SetJobCapResponse403
    | SetJobCapResponse404
    | SetJobCapResponse409
    | SetJobCapResponse413
    | SetJobCapResponse414
    | SetJobCapResponse415
    | SetJobCapResponse422
    | SetJobCapResponse429
    | SetJobCapResponse431
    | SetJobCapResponse500
    | SetJobCapResponse503
    | None
):
    if response.status_code == 200:
        response_200 = ParentView.from_dict(response.json())

        return response_200

    if response.status_code == 400:
        response_400 = SetJobCapResponse400.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = SetJobCapResponse401.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = SetJobCapResponse403.from_dict(response.json())

        return response_403

    if response.status_code == 404:
        response_404 = SetJobCapResponse404.from_dict(response.json())

        return response_404

    if response.status_code == 409:
        response_409 = SetJobCapResponse409.from_dict(response.json())

        return response_409

    if response.status_code == 413:
        response_413 = SetJobCapResponse413.from_dict(response.json())

        return response_413

    if response.status_code == 414:
        response_414 = SetJobCapResponse414.from_dict(response.json())

        return response_414

    if response.status_code == 415:
        response_415 = SetJobCapResponse415.from_dict(response.json())

        return response_415

    if response.status_code == 422:
        response_422 = SetJobCapResponse422.from_dict(response.json())

        return response_422

    if response.status_code == 429:
        response_429 = SetJobCapResponse429.from_dict(response.json())

        return response_429

    if response.status_code == 431:
        response_431 = SetJobCapResponse431.from_dict(response.json())

        return response_431

    if response.status_code == 500:
        response_500 = SetJobCapResponse500.from_dict(response.json())

        return response_500

    if response.status_code == 503:
        response_503 = SetJobCapResponse503.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[
    ParentView
    | SetJobCapResponse400
    | SetJobCapResponse401
    | SetJobCapResponse403
    | SetJobCapResponse404
    | SetJobCapResponse409
    | SetJobCapResponse413
    | SetJobCapResponse414
    | SetJobCapResponse415
    | SetJobCapResponse422
    | SetJobCapResponse429
    | SetJobCapResponse431
    | SetJobCapResponse500
    | SetJobCapResponse503
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
    body: Cap,
) -> Response[
    ParentView
    | SetJobCapResponse400
    | SetJobCapResponse401
    | SetJobCapResponse403
    | SetJobCapResponse404
    | SetJobCapResponse409
    | SetJobCapResponse413
    | SetJobCapResponse414
    | SetJobCapResponse415
    | SetJobCapResponse422
    | SetJobCapResponse429
    | SetJobCapResponse431
    | SetJobCapResponse500
    | SetJobCapResponse503
]:
    """Change a running group's cap: a higher one starts children at once, a lower one as children end

    Args:
        job_id (str):
        body (Cap):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ParentView | SetJobCapResponse400 | SetJobCapResponse401 | SetJobCapResponse403 | SetJobCapResponse404 | SetJobCapResponse409 | SetJobCapResponse413 | SetJobCapResponse414 | SetJobCapResponse415 | SetJobCapResponse422 | SetJobCapResponse429 | SetJobCapResponse431 | SetJobCapResponse500 | SetJobCapResponse503]
    """

    kwargs = _get_kwargs(
        job_id=job_id,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    job_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: Cap,
) -> (
    ParentView
    | SetJobCapResponse400
    | SetJobCapResponse401
    | SetJobCapResponse403
    | SetJobCapResponse404
    | SetJobCapResponse409
    | SetJobCapResponse413
    | SetJobCapResponse414
    | SetJobCapResponse415
    | SetJobCapResponse422
    | SetJobCapResponse429
    | SetJobCapResponse431
    | SetJobCapResponse500
    | SetJobCapResponse503
    | None
):
    """Change a running group's cap: a higher one starts children at once, a lower one as children end

    Args:
        job_id (str):
        body (Cap):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ParentView | SetJobCapResponse400 | SetJobCapResponse401 | SetJobCapResponse403 | SetJobCapResponse404 | SetJobCapResponse409 | SetJobCapResponse413 | SetJobCapResponse414 | SetJobCapResponse415 | SetJobCapResponse422 | SetJobCapResponse429 | SetJobCapResponse431 | SetJobCapResponse500 | SetJobCapResponse503
    """

    return sync_detailed(
        job_id=job_id,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    job_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: Cap,
) -> Response[
    ParentView
    | SetJobCapResponse400
    | SetJobCapResponse401
    | SetJobCapResponse403
    | SetJobCapResponse404
    | SetJobCapResponse409
    | SetJobCapResponse413
    | SetJobCapResponse414
    | SetJobCapResponse415
    | SetJobCapResponse422
    | SetJobCapResponse429
    | SetJobCapResponse431
    | SetJobCapResponse500
    | SetJobCapResponse503
]:
    """Change a running group's cap: a higher one starts children at once, a lower one as children end

    Args:
        job_id (str):
        body (Cap):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ParentView | SetJobCapResponse400 | SetJobCapResponse401 | SetJobCapResponse403 | SetJobCapResponse404 | SetJobCapResponse409 | SetJobCapResponse413 | SetJobCapResponse414 | SetJobCapResponse415 | SetJobCapResponse422 | SetJobCapResponse429 | SetJobCapResponse431 | SetJobCapResponse500 | SetJobCapResponse503]
    """

    kwargs = _get_kwargs(
        job_id=job_id,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    job_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: Cap,
) -> (
    ParentView
    | SetJobCapResponse400
    | SetJobCapResponse401
    | SetJobCapResponse403
    | SetJobCapResponse404
    | SetJobCapResponse409
    | SetJobCapResponse413
    | SetJobCapResponse414
    | SetJobCapResponse415
    | SetJobCapResponse422
    | SetJobCapResponse429
    | SetJobCapResponse431
    | SetJobCapResponse500
    | SetJobCapResponse503
    | None
):
    """Change a running group's cap: a higher one starts children at once, a lower one as children end

    Args:
        job_id (str):
        body (Cap):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ParentView | SetJobCapResponse400 | SetJobCapResponse401 | SetJobCapResponse403 | SetJobCapResponse404 | SetJobCapResponse409 | SetJobCapResponse413 | SetJobCapResponse414 | SetJobCapResponse415 | SetJobCapResponse422 | SetJobCapResponse429 | SetJobCapResponse431 | SetJobCapResponse500 | SetJobCapResponse503
    """

    return (
        await asyncio_detailed(
            job_id=job_id,
            client=client,
            body=body,
        )
    ).parsed
