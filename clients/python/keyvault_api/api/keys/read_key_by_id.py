from http import HTTPStatus
from typing import Any, Optional, Union

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.damaged_answer import DamagedAnswer
from ...models.destroyed_answer import DestroyedAnswer
from ...models.error_answer import ErrorAnswer
from ...models.forbidden_answer import ForbiddenAnswer
from ...models.invalid_answer import InvalidAnswer
from ...models.key_answer import KeyAnswer
from ...models.locked_answer import LockedAnswer
from ...models.pending_answer import PendingAnswer
from ...models.revoked_answer import RevokedAnswer
from ...models.unknown_answer import UnknownAnswer
from ...types import UNSET, Response, Unset


def _get_kwargs(
    user: str,
    key_id: str,
    *,
    wait: Union[Unset, int] = 0,
) -> dict[str, Any]:
    params: dict[str, Any] = {}

    params["wait"] = wait

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/accounts/{user}/keys/id/{key_id}".format(
            user=user,
            key_id=key_id,
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: Union[AuthenticatedClient, Client], response: httpx.Response
) -> Optional[
    Union[
        DamagedAnswer,
        DestroyedAnswer,
        ErrorAnswer,
        InvalidAnswer,
        KeyAnswer,
        LockedAnswer,
        PendingAnswer,
        Union["ForbiddenAnswer", "RevokedAnswer"],
        UnknownAnswer,
    ]
]:
    if response.status_code == 200:
        response_200 = KeyAnswer.from_dict(response.json())

        return response_200

    if response.status_code == 202:
        response_202 = PendingAnswer.from_dict(response.json())

        return response_202

    if response.status_code == 400:
        response_400 = InvalidAnswer.from_dict(response.json())

        return response_400

    if response.status_code == 403:

        def _parse_response_403(
            data: object,
        ) -> Union["ForbiddenAnswer", "RevokedAnswer"]:
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                response_403_type_0 = ForbiddenAnswer.from_dict(data)

                return response_403_type_0
            except:  # noqa: E722
                pass
            if not isinstance(data, dict):
                raise TypeError()
            response_403_type_1 = RevokedAnswer.from_dict(data)

            return response_403_type_1

        response_403 = _parse_response_403(response.json())

        return response_403

    if response.status_code == 404:
        response_404 = UnknownAnswer.from_dict(response.json())

        return response_404

    if response.status_code == 409:
        response_409 = DamagedAnswer.from_dict(response.json())

        return response_409

    if response.status_code == 410:
        response_410 = DestroyedAnswer.from_dict(response.json())

        return response_410

    if response.status_code == 423:
        response_423 = LockedAnswer.from_dict(response.json())

        return response_423

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
        DestroyedAnswer,
        ErrorAnswer,
        InvalidAnswer,
        KeyAnswer,
        LockedAnswer,
        PendingAnswer,
        Union["ForbiddenAnswer", "RevokedAnswer"],
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
    key_id: str,
    *,
    client: Union[AuthenticatedClient, Client],
    wait: Union[Unset, int] = 0,
) -> Response[
    Union[
        DamagedAnswer,
        DestroyedAnswer,
        ErrorAnswer,
        InvalidAnswer,
        KeyAnswer,
        LockedAnswer,
        PendingAnswer,
        Union["ForbiddenAnswer", "RevokedAnswer"],
        UnknownAnswer,
    ]
]:
    """A key by key ID.

     Answers, in the order they are checked: `invalid` (a malformed
    generation or key ID, a bad `wait`); `forbidden` (`wait` above 0
    without the `wait` permission); `unknown` (no such account); for a
    device joining the circle or founding an account the relay has not
    taken, `locked` while locked, else `pending`; `unknown` (no such
    generation or key ID); `destroyed`; `ready`; `revoked` (this device
    was removed and does not hold that key); `locked`; `pending`
    (`awaiting-delivery`). With `?wait=`, a `pending` answer (and, with
    a relay, a generation or key ID not heard of yet) is held until the
    key lands or the wait ends; a policy reload that takes away `read` or
    `wait` answers it `forbidden` at once.

    Args:
        user (str):
        key_id (str): 32 lowercase hex characters (a key ID or a device ID).
        wait (Union[Unset, int]):  Default: 0.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[DamagedAnswer, DestroyedAnswer, ErrorAnswer, InvalidAnswer, KeyAnswer, LockedAnswer, PendingAnswer, Union['ForbiddenAnswer', 'RevokedAnswer'], UnknownAnswer]]
    """

    kwargs = _get_kwargs(
        user=user,
        key_id=key_id,
        wait=wait,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    user: str,
    key_id: str,
    *,
    client: Union[AuthenticatedClient, Client],
    wait: Union[Unset, int] = 0,
) -> Optional[
    Union[
        DamagedAnswer,
        DestroyedAnswer,
        ErrorAnswer,
        InvalidAnswer,
        KeyAnswer,
        LockedAnswer,
        PendingAnswer,
        Union["ForbiddenAnswer", "RevokedAnswer"],
        UnknownAnswer,
    ]
]:
    """A key by key ID.

     Answers, in the order they are checked: `invalid` (a malformed
    generation or key ID, a bad `wait`); `forbidden` (`wait` above 0
    without the `wait` permission); `unknown` (no such account); for a
    device joining the circle or founding an account the relay has not
    taken, `locked` while locked, else `pending`; `unknown` (no such
    generation or key ID); `destroyed`; `ready`; `revoked` (this device
    was removed and does not hold that key); `locked`; `pending`
    (`awaiting-delivery`). With `?wait=`, a `pending` answer (and, with
    a relay, a generation or key ID not heard of yet) is held until the
    key lands or the wait ends; a policy reload that takes away `read` or
    `wait` answers it `forbidden` at once.

    Args:
        user (str):
        key_id (str): 32 lowercase hex characters (a key ID or a device ID).
        wait (Union[Unset, int]):  Default: 0.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[DamagedAnswer, DestroyedAnswer, ErrorAnswer, InvalidAnswer, KeyAnswer, LockedAnswer, PendingAnswer, Union['ForbiddenAnswer', 'RevokedAnswer'], UnknownAnswer]
    """

    return sync_detailed(
        user=user,
        key_id=key_id,
        client=client,
        wait=wait,
    ).parsed


async def asyncio_detailed(
    user: str,
    key_id: str,
    *,
    client: Union[AuthenticatedClient, Client],
    wait: Union[Unset, int] = 0,
) -> Response[
    Union[
        DamagedAnswer,
        DestroyedAnswer,
        ErrorAnswer,
        InvalidAnswer,
        KeyAnswer,
        LockedAnswer,
        PendingAnswer,
        Union["ForbiddenAnswer", "RevokedAnswer"],
        UnknownAnswer,
    ]
]:
    """A key by key ID.

     Answers, in the order they are checked: `invalid` (a malformed
    generation or key ID, a bad `wait`); `forbidden` (`wait` above 0
    without the `wait` permission); `unknown` (no such account); for a
    device joining the circle or founding an account the relay has not
    taken, `locked` while locked, else `pending`; `unknown` (no such
    generation or key ID); `destroyed`; `ready`; `revoked` (this device
    was removed and does not hold that key); `locked`; `pending`
    (`awaiting-delivery`). With `?wait=`, a `pending` answer (and, with
    a relay, a generation or key ID not heard of yet) is held until the
    key lands or the wait ends; a policy reload that takes away `read` or
    `wait` answers it `forbidden` at once.

    Args:
        user (str):
        key_id (str): 32 lowercase hex characters (a key ID or a device ID).
        wait (Union[Unset, int]):  Default: 0.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[DamagedAnswer, DestroyedAnswer, ErrorAnswer, InvalidAnswer, KeyAnswer, LockedAnswer, PendingAnswer, Union['ForbiddenAnswer', 'RevokedAnswer'], UnknownAnswer]]
    """

    kwargs = _get_kwargs(
        user=user,
        key_id=key_id,
        wait=wait,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    user: str,
    key_id: str,
    *,
    client: Union[AuthenticatedClient, Client],
    wait: Union[Unset, int] = 0,
) -> Optional[
    Union[
        DamagedAnswer,
        DestroyedAnswer,
        ErrorAnswer,
        InvalidAnswer,
        KeyAnswer,
        LockedAnswer,
        PendingAnswer,
        Union["ForbiddenAnswer", "RevokedAnswer"],
        UnknownAnswer,
    ]
]:
    """A key by key ID.

     Answers, in the order they are checked: `invalid` (a malformed
    generation or key ID, a bad `wait`); `forbidden` (`wait` above 0
    without the `wait` permission); `unknown` (no such account); for a
    device joining the circle or founding an account the relay has not
    taken, `locked` while locked, else `pending`; `unknown` (no such
    generation or key ID); `destroyed`; `ready`; `revoked` (this device
    was removed and does not hold that key); `locked`; `pending`
    (`awaiting-delivery`). With `?wait=`, a `pending` answer (and, with
    a relay, a generation or key ID not heard of yet) is held until the
    key lands or the wait ends; a policy reload that takes away `read` or
    `wait` answers it `forbidden` at once.

    Args:
        user (str):
        key_id (str): 32 lowercase hex characters (a key ID or a device ID).
        wait (Union[Unset, int]):  Default: 0.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[DamagedAnswer, DestroyedAnswer, ErrorAnswer, InvalidAnswer, KeyAnswer, LockedAnswer, PendingAnswer, Union['ForbiddenAnswer', 'RevokedAnswer'], UnknownAnswer]
    """

    return (
        await asyncio_detailed(
            user=user,
            key_id=key_id,
            client=client,
            wait=wait,
        )
    ).parsed
