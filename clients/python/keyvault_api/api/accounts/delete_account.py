from http import HTTPStatus
from typing import Any, Optional, Union

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.damaged_answer import DamagedAnswer
from ...models.delete_account_everywhere import DeleteAccountEverywhere
from ...models.deleted_answer import DeletedAnswer
from ...models.error_answer import ErrorAnswer
from ...models.forbidden_answer import ForbiddenAnswer
from ...models.invalid_answer import InvalidAnswer
from ...models.locked_answer import LockedAnswer
from ...models.revoked_answer import RevokedAnswer
from ...models.unknown_answer import UnknownAnswer
from ...types import UNSET, Response, Unset


def _get_kwargs(
    user: str,
    *,
    everywhere: Union[Unset, DeleteAccountEverywhere] = DeleteAccountEverywhere.FALSE,
) -> dict[str, Any]:
    params: dict[str, Any] = {}

    json_everywhere: Union[Unset, str] = UNSET
    if not isinstance(everywhere, Unset):
        json_everywhere = everywhere.value

    params["everywhere"] = json_everywhere

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "delete",
        "url": "/v1/accounts/{user}".format(
            user=user,
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: Union[AuthenticatedClient, Client], response: httpx.Response
) -> Optional[
    Union[
        DamagedAnswer,
        DeletedAnswer,
        ErrorAnswer,
        InvalidAnswer,
        LockedAnswer,
        Union["ForbiddenAnswer", "RevokedAnswer"],
        UnknownAnswer,
    ]
]:
    if response.status_code == 200:
        response_200 = DeletedAnswer.from_dict(response.json())

        return response_200

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
        DeletedAnswer,
        ErrorAnswer,
        InvalidAnswer,
        LockedAnswer,
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
    *,
    client: Union[AuthenticatedClient, Client],
    everywhere: Union[Unset, DeleteAccountEverywhere] = DeleteAccountEverywhere.FALSE,
) -> Response[
    Union[
        DamagedAnswer,
        DeletedAnswer,
        ErrorAnswer,
        InvalidAnswer,
        LockedAnswer,
        Union["ForbiddenAnswer", "RevokedAnswer"],
        UnknownAnswer,
    ]
]:
    """Removes the account from this device, or destroys it everywhere.

     `?everywhere=true` appends a signed `destroy` entry to the circle log
    instead: every device deletes its wrapped keys and answers `destroyed`
    to key reads. `invalid` for another value, or for `everywhere=true`
    on an account with no circle (no relay); `locked` for
    `everywhere=true` on a locked account (it needs the signing key);
    `revoked` for `everywhere=true` on a device removed from the circle.

    Args:
        user (str):
        everywhere (Union[Unset, DeleteAccountEverywhere]):  Default:
            DeleteAccountEverywhere.FALSE.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[DamagedAnswer, DeletedAnswer, ErrorAnswer, InvalidAnswer, LockedAnswer, Union['ForbiddenAnswer', 'RevokedAnswer'], UnknownAnswer]]
    """

    kwargs = _get_kwargs(
        user=user,
        everywhere=everywhere,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    user: str,
    *,
    client: Union[AuthenticatedClient, Client],
    everywhere: Union[Unset, DeleteAccountEverywhere] = DeleteAccountEverywhere.FALSE,
) -> Optional[
    Union[
        DamagedAnswer,
        DeletedAnswer,
        ErrorAnswer,
        InvalidAnswer,
        LockedAnswer,
        Union["ForbiddenAnswer", "RevokedAnswer"],
        UnknownAnswer,
    ]
]:
    """Removes the account from this device, or destroys it everywhere.

     `?everywhere=true` appends a signed `destroy` entry to the circle log
    instead: every device deletes its wrapped keys and answers `destroyed`
    to key reads. `invalid` for another value, or for `everywhere=true`
    on an account with no circle (no relay); `locked` for
    `everywhere=true` on a locked account (it needs the signing key);
    `revoked` for `everywhere=true` on a device removed from the circle.

    Args:
        user (str):
        everywhere (Union[Unset, DeleteAccountEverywhere]):  Default:
            DeleteAccountEverywhere.FALSE.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[DamagedAnswer, DeletedAnswer, ErrorAnswer, InvalidAnswer, LockedAnswer, Union['ForbiddenAnswer', 'RevokedAnswer'], UnknownAnswer]
    """

    return sync_detailed(
        user=user,
        client=client,
        everywhere=everywhere,
    ).parsed


async def asyncio_detailed(
    user: str,
    *,
    client: Union[AuthenticatedClient, Client],
    everywhere: Union[Unset, DeleteAccountEverywhere] = DeleteAccountEverywhere.FALSE,
) -> Response[
    Union[
        DamagedAnswer,
        DeletedAnswer,
        ErrorAnswer,
        InvalidAnswer,
        LockedAnswer,
        Union["ForbiddenAnswer", "RevokedAnswer"],
        UnknownAnswer,
    ]
]:
    """Removes the account from this device, or destroys it everywhere.

     `?everywhere=true` appends a signed `destroy` entry to the circle log
    instead: every device deletes its wrapped keys and answers `destroyed`
    to key reads. `invalid` for another value, or for `everywhere=true`
    on an account with no circle (no relay); `locked` for
    `everywhere=true` on a locked account (it needs the signing key);
    `revoked` for `everywhere=true` on a device removed from the circle.

    Args:
        user (str):
        everywhere (Union[Unset, DeleteAccountEverywhere]):  Default:
            DeleteAccountEverywhere.FALSE.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[DamagedAnswer, DeletedAnswer, ErrorAnswer, InvalidAnswer, LockedAnswer, Union['ForbiddenAnswer', 'RevokedAnswer'], UnknownAnswer]]
    """

    kwargs = _get_kwargs(
        user=user,
        everywhere=everywhere,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    user: str,
    *,
    client: Union[AuthenticatedClient, Client],
    everywhere: Union[Unset, DeleteAccountEverywhere] = DeleteAccountEverywhere.FALSE,
) -> Optional[
    Union[
        DamagedAnswer,
        DeletedAnswer,
        ErrorAnswer,
        InvalidAnswer,
        LockedAnswer,
        Union["ForbiddenAnswer", "RevokedAnswer"],
        UnknownAnswer,
    ]
]:
    """Removes the account from this device, or destroys it everywhere.

     `?everywhere=true` appends a signed `destroy` entry to the circle log
    instead: every device deletes its wrapped keys and answers `destroyed`
    to key reads. `invalid` for another value, or for `everywhere=true`
    on an account with no circle (no relay); `locked` for
    `everywhere=true` on a locked account (it needs the signing key);
    `revoked` for `everywhere=true` on a device removed from the circle.

    Args:
        user (str):
        everywhere (Union[Unset, DeleteAccountEverywhere]):  Default:
            DeleteAccountEverywhere.FALSE.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[DamagedAnswer, DeletedAnswer, ErrorAnswer, InvalidAnswer, LockedAnswer, Union['ForbiddenAnswer', 'RevokedAnswer'], UnknownAnswer]
    """

    return (
        await asyncio_detailed(
            user=user,
            client=client,
            everywhere=everywhere,
        )
    ).parsed
