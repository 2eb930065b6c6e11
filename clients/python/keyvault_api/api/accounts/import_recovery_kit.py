from http import HTTPStatus
from typing import Any, Optional, Union

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.damaged_answer import DamagedAnswer
from ...models.denied_answer import DeniedAnswer
from ...models.error_answer import ErrorAnswer
from ...models.forbidden_answer import ForbiddenAnswer
from ...models.import_answer import ImportAnswer
from ...models.import_request import ImportRequest
from ...models.invalid_answer import InvalidAnswer
from ...models.throttled_answer import ThrottledAnswer
from ...types import Response


def _get_kwargs(
    *,
    body: ImportRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/accounts/import",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: Union[AuthenticatedClient, Client], response: httpx.Response
) -> Optional[
    Union[
        DamagedAnswer,
        DeniedAnswer,
        ErrorAnswer,
        ForbiddenAnswer,
        ImportAnswer,
        InvalidAnswer,
        ThrottledAnswer,
    ]
]:
    if response.status_code == 200:
        response_200 = ImportAnswer.from_dict(response.json())

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
        DamagedAnswer,
        DeniedAnswer,
        ErrorAnswer,
        ForbiddenAnswer,
        ImportAnswer,
        InvalidAnswer,
        ThrottledAnswer,
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
    body: ImportRequest,
) -> Response[
    Union[
        DamagedAnswer,
        DeniedAnswer,
        ErrorAnswer,
        ForbiddenAnswer,
        ImportAnswer,
        InvalidAnswer,
        ThrottledAnswer,
    ]
]:
    """Restores an account from a recovery kit, on this device alone.

     The caller must hold `create` for the account the kit names
    (`forbidden` otherwise, checked before any KDF work). `invalid`: not a
    keyvaultd kit, a KDF cost out of bounds or out of the policy's range,
    a kit with no key, or an account already here. `denied`: wrong kit
    passphrase, or a changed kit.

    Args:
        body (ImportRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[DamagedAnswer, DeniedAnswer, ErrorAnswer, ForbiddenAnswer, ImportAnswer, InvalidAnswer, ThrottledAnswer]]
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
    body: ImportRequest,
) -> Optional[
    Union[
        DamagedAnswer,
        DeniedAnswer,
        ErrorAnswer,
        ForbiddenAnswer,
        ImportAnswer,
        InvalidAnswer,
        ThrottledAnswer,
    ]
]:
    """Restores an account from a recovery kit, on this device alone.

     The caller must hold `create` for the account the kit names
    (`forbidden` otherwise, checked before any KDF work). `invalid`: not a
    keyvaultd kit, a KDF cost out of bounds or out of the policy's range,
    a kit with no key, or an account already here. `denied`: wrong kit
    passphrase, or a changed kit.

    Args:
        body (ImportRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[DamagedAnswer, DeniedAnswer, ErrorAnswer, ForbiddenAnswer, ImportAnswer, InvalidAnswer, ThrottledAnswer]
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: Union[AuthenticatedClient, Client],
    body: ImportRequest,
) -> Response[
    Union[
        DamagedAnswer,
        DeniedAnswer,
        ErrorAnswer,
        ForbiddenAnswer,
        ImportAnswer,
        InvalidAnswer,
        ThrottledAnswer,
    ]
]:
    """Restores an account from a recovery kit, on this device alone.

     The caller must hold `create` for the account the kit names
    (`forbidden` otherwise, checked before any KDF work). `invalid`: not a
    keyvaultd kit, a KDF cost out of bounds or out of the policy's range,
    a kit with no key, or an account already here. `denied`: wrong kit
    passphrase, or a changed kit.

    Args:
        body (ImportRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[DamagedAnswer, DeniedAnswer, ErrorAnswer, ForbiddenAnswer, ImportAnswer, InvalidAnswer, ThrottledAnswer]]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: Union[AuthenticatedClient, Client],
    body: ImportRequest,
) -> Optional[
    Union[
        DamagedAnswer,
        DeniedAnswer,
        ErrorAnswer,
        ForbiddenAnswer,
        ImportAnswer,
        InvalidAnswer,
        ThrottledAnswer,
    ]
]:
    """Restores an account from a recovery kit, on this device alone.

     The caller must hold `create` for the account the kit names
    (`forbidden` otherwise, checked before any KDF work). `invalid`: not a
    keyvaultd kit, a KDF cost out of bounds or out of the policy's range,
    a kit with no key, or an account already here. `denied`: wrong kit
    passphrase, or a changed kit.

    Args:
        body (ImportRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[DamagedAnswer, DeniedAnswer, ErrorAnswer, ForbiddenAnswer, ImportAnswer, InvalidAnswer, ThrottledAnswer]
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
