from http import HTTPStatus
from typing import Any, Optional, Union

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.account_answer import AccountAnswer
from ...models.change_passphrase_request import ChangePassphraseRequest
from ...models.damaged_answer import DamagedAnswer
from ...models.denied_answer import DeniedAnswer
from ...models.error_answer import ErrorAnswer
from ...models.forbidden_answer import ForbiddenAnswer
from ...models.invalid_answer import InvalidAnswer
from ...models.throttled_answer import ThrottledAnswer
from ...models.unknown_answer import UnknownAnswer
from ...types import Response


def _get_kwargs(
    user: str,
    *,
    body: ChangePassphraseRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/accounts/{user}/passphrase".format(
            user=user,
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: Union[AuthenticatedClient, Client], response: httpx.Response
) -> Optional[
    Union[
        AccountAnswer,
        DamagedAnswer,
        DeniedAnswer,
        ErrorAnswer,
        ForbiddenAnswer,
        InvalidAnswer,
        ThrottledAnswer,
        UnknownAnswer,
    ]
]:
    if response.status_code == 200:
        response_200 = AccountAnswer.from_dict(response.json())

        return response_200

    if response.status_code == 400:
        response_400 = InvalidAnswer.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = DeniedAnswer.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = ForbiddenAnswer.from_dict(response.json())

        return response_403

    if response.status_code == 404:
        response_404 = UnknownAnswer.from_dict(response.json())

        return response_404

    if response.status_code == 409:
        response_409 = DamagedAnswer.from_dict(response.json())

        return response_409

    if response.status_code == 429:
        response_429 = ThrottledAnswer.from_dict(response.json())

        return response_429

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
        AccountAnswer,
        DamagedAnswer,
        DeniedAnswer,
        ErrorAnswer,
        ForbiddenAnswer,
        InvalidAnswer,
        ThrottledAnswer,
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
    *,
    client: Union[AuthenticatedClient, Client],
    body: ChangePassphraseRequest,
) -> Response[
    Union[
        AccountAnswer,
        DamagedAnswer,
        DeniedAnswer,
        ErrorAnswer,
        ForbiddenAnswer,
        InvalidAnswer,
        ThrottledAnswer,
        UnknownAnswer,
    ]
]:
    """Re-wraps every secret under a new passphrase; leaves the account unlocked.

     `old` is checked under the unlock back-off, as `unlock` checks its
    passphrase (shared count). Two Argon2id runs.

    Args:
        user (str):
        body (ChangePassphraseRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[AccountAnswer, DamagedAnswer, DeniedAnswer, ErrorAnswer, ForbiddenAnswer, InvalidAnswer, ThrottledAnswer, UnknownAnswer]]
    """

    kwargs = _get_kwargs(
        user=user,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    user: str,
    *,
    client: Union[AuthenticatedClient, Client],
    body: ChangePassphraseRequest,
) -> Optional[
    Union[
        AccountAnswer,
        DamagedAnswer,
        DeniedAnswer,
        ErrorAnswer,
        ForbiddenAnswer,
        InvalidAnswer,
        ThrottledAnswer,
        UnknownAnswer,
    ]
]:
    """Re-wraps every secret under a new passphrase; leaves the account unlocked.

     `old` is checked under the unlock back-off, as `unlock` checks its
    passphrase (shared count). Two Argon2id runs.

    Args:
        user (str):
        body (ChangePassphraseRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[AccountAnswer, DamagedAnswer, DeniedAnswer, ErrorAnswer, ForbiddenAnswer, InvalidAnswer, ThrottledAnswer, UnknownAnswer]
    """

    return sync_detailed(
        user=user,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    user: str,
    *,
    client: Union[AuthenticatedClient, Client],
    body: ChangePassphraseRequest,
) -> Response[
    Union[
        AccountAnswer,
        DamagedAnswer,
        DeniedAnswer,
        ErrorAnswer,
        ForbiddenAnswer,
        InvalidAnswer,
        ThrottledAnswer,
        UnknownAnswer,
    ]
]:
    """Re-wraps every secret under a new passphrase; leaves the account unlocked.

     `old` is checked under the unlock back-off, as `unlock` checks its
    passphrase (shared count). Two Argon2id runs.

    Args:
        user (str):
        body (ChangePassphraseRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[AccountAnswer, DamagedAnswer, DeniedAnswer, ErrorAnswer, ForbiddenAnswer, InvalidAnswer, ThrottledAnswer, UnknownAnswer]]
    """

    kwargs = _get_kwargs(
        user=user,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    user: str,
    *,
    client: Union[AuthenticatedClient, Client],
    body: ChangePassphraseRequest,
) -> Optional[
    Union[
        AccountAnswer,
        DamagedAnswer,
        DeniedAnswer,
        ErrorAnswer,
        ForbiddenAnswer,
        InvalidAnswer,
        ThrottledAnswer,
        UnknownAnswer,
    ]
]:
    """Re-wraps every secret under a new passphrase; leaves the account unlocked.

     `old` is checked under the unlock back-off, as `unlock` checks its
    passphrase (shared count). Two Argon2id runs.

    Args:
        user (str):
        body (ChangePassphraseRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[AccountAnswer, DamagedAnswer, DeniedAnswer, ErrorAnswer, ForbiddenAnswer, InvalidAnswer, ThrottledAnswer, UnknownAnswer]
    """

    return (
        await asyncio_detailed(
            user=user,
            client=client,
            body=body,
        )
    ).parsed
