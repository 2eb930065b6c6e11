from http import HTTPStatus
from typing import Any, Optional, Union

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.damaged_answer import DamagedAnswer
from ...models.dismissed_answer import DismissedAnswer
from ...models.error_answer import ErrorAnswer
from ...models.forbidden_answer import ForbiddenAnswer
from ...models.invalid_answer import InvalidAnswer
from ...models.unknown_answer import UnknownAnswer
from ...types import Response


def _get_kwargs(
    user: str,
    device_id: str,
) -> dict[str, Any]:
    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/accounts/{user}/enrollments/{device_id}/dismiss".format(
            user=user,
            device_id=device_id,
        ),
    }

    return _kwargs


def _parse_response(
    *, client: Union[AuthenticatedClient, Client], response: httpx.Response
) -> Optional[
    Union[
        DamagedAnswer,
        DismissedAnswer,
        ErrorAnswer,
        ForbiddenAnswer,
        InvalidAnswer,
        UnknownAnswer,
    ]
]:
    if response.status_code == 200:
        response_200 = DismissedAnswer.from_dict(response.json())

        return response_200

    if response.status_code == 400:
        response_400 = InvalidAnswer.from_dict(response.json())

        return response_400

    if response.status_code == 403:
        response_403 = ForbiddenAnswer.from_dict(response.json())

        return response_403

    if response.status_code == 404:
        response_404 = UnknownAnswer.from_dict(response.json())

        return response_404

    if response.status_code == 409:
        response_409 = DamagedAnswer.from_dict(response.json())

        return response_409

    if response.status_code == 500:
        response_500 = ErrorAnswer.from_dict(response.json())

        return response_500

    if response.status_code == 503:
        response_503 = ErrorAnswer.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: Union[AuthenticatedClient, Client], response: httpx.Response
) -> Response[
    Union[
        DamagedAnswer,
        DismissedAnswer,
        ErrorAnswer,
        ForbiddenAnswer,
        InvalidAnswer,
        UnknownAnswer,
    ]
]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    user: str,
    device_id: str,
    *,
    client: Union[AuthenticatedClient, Client],
) -> Response[
    Union[
        DamagedAnswer,
        DismissedAnswer,
        ErrorAnswer,
        ForbiddenAnswer,
        InvalidAnswer,
        UnknownAnswer,
    ]
]:
    """Dismisses the request from that device on this device. No body (or `{}`); works while locked.

     `invalid`: a malformed device ID, or this device not trusted. `unknown`: no such request here.

    Args:
        user (str):
        device_id (str): 32 lowercase hex characters (a key ID or a device ID).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[DamagedAnswer, DismissedAnswer, ErrorAnswer, ForbiddenAnswer, InvalidAnswer, UnknownAnswer]]
    """

    kwargs = _get_kwargs(
        user=user,
        device_id=device_id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    user: str,
    device_id: str,
    *,
    client: Union[AuthenticatedClient, Client],
) -> Optional[
    Union[
        DamagedAnswer,
        DismissedAnswer,
        ErrorAnswer,
        ForbiddenAnswer,
        InvalidAnswer,
        UnknownAnswer,
    ]
]:
    """Dismisses the request from that device on this device. No body (or `{}`); works while locked.

     `invalid`: a malformed device ID, or this device not trusted. `unknown`: no such request here.

    Args:
        user (str):
        device_id (str): 32 lowercase hex characters (a key ID or a device ID).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[DamagedAnswer, DismissedAnswer, ErrorAnswer, ForbiddenAnswer, InvalidAnswer, UnknownAnswer]
    """

    return sync_detailed(
        user=user,
        device_id=device_id,
        client=client,
    ).parsed


async def asyncio_detailed(
    user: str,
    device_id: str,
    *,
    client: Union[AuthenticatedClient, Client],
) -> Response[
    Union[
        DamagedAnswer,
        DismissedAnswer,
        ErrorAnswer,
        ForbiddenAnswer,
        InvalidAnswer,
        UnknownAnswer,
    ]
]:
    """Dismisses the request from that device on this device. No body (or `{}`); works while locked.

     `invalid`: a malformed device ID, or this device not trusted. `unknown`: no such request here.

    Args:
        user (str):
        device_id (str): 32 lowercase hex characters (a key ID or a device ID).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[DamagedAnswer, DismissedAnswer, ErrorAnswer, ForbiddenAnswer, InvalidAnswer, UnknownAnswer]]
    """

    kwargs = _get_kwargs(
        user=user,
        device_id=device_id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    user: str,
    device_id: str,
    *,
    client: Union[AuthenticatedClient, Client],
) -> Optional[
    Union[
        DamagedAnswer,
        DismissedAnswer,
        ErrorAnswer,
        ForbiddenAnswer,
        InvalidAnswer,
        UnknownAnswer,
    ]
]:
    """Dismisses the request from that device on this device. No body (or `{}`); works while locked.

     `invalid`: a malformed device ID, or this device not trusted. `unknown`: no such request here.

    Args:
        user (str):
        device_id (str): 32 lowercase hex characters (a key ID or a device ID).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[DamagedAnswer, DismissedAnswer, ErrorAnswer, ForbiddenAnswer, InvalidAnswer, UnknownAnswer]
    """

    return (
        await asyncio_detailed(
            user=user,
            device_id=device_id,
            client=client,
        )
    ).parsed
