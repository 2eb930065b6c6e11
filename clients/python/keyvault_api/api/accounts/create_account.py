from http import HTTPStatus
from typing import Any, Optional, Union

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.account_answer import AccountAnswer
from ...models.create_account_request import CreateAccountRequest
from ...models.damaged_answer import DamagedAnswer
from ...models.denied_answer import DeniedAnswer
from ...models.error_answer import ErrorAnswer
from ...models.forbidden_answer import ForbiddenAnswer
from ...models.invalid_answer import InvalidAnswer
from ...types import Response


def _get_kwargs(
    *,
    body: CreateAccountRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/accounts",
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
        AccountAnswer,
        DamagedAnswer,
        DeniedAnswer,
        ErrorAnswer,
        ForbiddenAnswer,
        InvalidAnswer,
    ]
]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: Union[AuthenticatedClient, Client],
    body: CreateAccountRequest,
) -> Response[
    Union[
        AccountAnswer,
        DamagedAnswer,
        DeniedAnswer,
        ErrorAnswer,
        ForbiddenAnswer,
        InvalidAnswer,
    ]
]:
    """Creates an account on its first device (genesis); it starts unlocked.

     `create` is checked first for any account, then for the account named
    in the body. Takes one Argon2id run. With a relay service the body
    carries `identityToken` (else `denied`); with the embedded relay or
    none it is ignored. `error` (500) if the relay did not answer (nothing
    was created).

    Args:
        body (CreateAccountRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[AccountAnswer, DamagedAnswer, DeniedAnswer, ErrorAnswer, ForbiddenAnswer, InvalidAnswer]]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: Union[AuthenticatedClient, Client],
    body: CreateAccountRequest,
) -> Optional[
    Union[
        AccountAnswer,
        DamagedAnswer,
        DeniedAnswer,
        ErrorAnswer,
        ForbiddenAnswer,
        InvalidAnswer,
    ]
]:
    """Creates an account on its first device (genesis); it starts unlocked.

     `create` is checked first for any account, then for the account named
    in the body. Takes one Argon2id run. With a relay service the body
    carries `identityToken` (else `denied`); with the embedded relay or
    none it is ignored. `error` (500) if the relay did not answer (nothing
    was created).

    Args:
        body (CreateAccountRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[AccountAnswer, DamagedAnswer, DeniedAnswer, ErrorAnswer, ForbiddenAnswer, InvalidAnswer]
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: Union[AuthenticatedClient, Client],
    body: CreateAccountRequest,
) -> Response[
    Union[
        AccountAnswer,
        DamagedAnswer,
        DeniedAnswer,
        ErrorAnswer,
        ForbiddenAnswer,
        InvalidAnswer,
    ]
]:
    """Creates an account on its first device (genesis); it starts unlocked.

     `create` is checked first for any account, then for the account named
    in the body. Takes one Argon2id run. With a relay service the body
    carries `identityToken` (else `denied`); with the embedded relay or
    none it is ignored. `error` (500) if the relay did not answer (nothing
    was created).

    Args:
        body (CreateAccountRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[AccountAnswer, DamagedAnswer, DeniedAnswer, ErrorAnswer, ForbiddenAnswer, InvalidAnswer]]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: Union[AuthenticatedClient, Client],
    body: CreateAccountRequest,
) -> Optional[
    Union[
        AccountAnswer,
        DamagedAnswer,
        DeniedAnswer,
        ErrorAnswer,
        ForbiddenAnswer,
        InvalidAnswer,
    ]
]:
    """Creates an account on its first device (genesis); it starts unlocked.

     `create` is checked first for any account, then for the account named
    in the body. Takes one Argon2id run. With a relay service the body
    carries `identityToken` (else `denied`); with the embedded relay or
    none it is ignored. `error` (500) if the relay did not answer (nothing
    was created).

    Args:
        body (CreateAccountRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[AccountAnswer, DamagedAnswer, DeniedAnswer, ErrorAnswer, ForbiddenAnswer, InvalidAnswer]
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
