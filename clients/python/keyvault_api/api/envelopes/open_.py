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
from ...models.locked_answer import LockedAnswer
from ...models.open_request import OpenRequest
from ...models.opened_answer import OpenedAnswer
from ...models.pending_answer import PendingAnswer
from ...models.revoked_answer import RevokedAnswer
from ...models.unknown_answer import UnknownAnswer
from ...types import Response


def _get_kwargs(
    user: str,
    *,
    body: OpenRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/accounts/{user}/open".format(
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
        DamagedAnswer,
        DestroyedAnswer,
        ErrorAnswer,
        InvalidAnswer,
        LockedAnswer,
        OpenedAnswer,
        PendingAnswer,
        Union["ForbiddenAnswer", "RevokedAnswer"],
        UnknownAnswer,
    ]
]:
    if response.status_code == 200:
        response_200 = OpenedAnswer.from_dict(response.json())

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
        LockedAnswer,
        OpenedAnswer,
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
    *,
    client: Union[AuthenticatedClient, Client],
    body: OpenRequest,
) -> Response[
    Union[
        DamagedAnswer,
        DestroyedAnswer,
        ErrorAnswer,
        InvalidAnswer,
        LockedAnswer,
        OpenedAnswer,
        PendingAnswer,
        Union["ForbiddenAnswer", "RevokedAnswer"],
        UnknownAnswer,
    ]
]:
    """Opens 1 to 1000 envelopes, each under the generation its key ID names, all or nothing.

     Keys are looked up in item order; the first that is not `ready`
    decides the answer. An envelope that does not open (wrong key,
    account or aad, or altered) is `invalid`.

    Args:
        user (str):
        body (OpenRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[DamagedAnswer, DestroyedAnswer, ErrorAnswer, InvalidAnswer, LockedAnswer, OpenedAnswer, PendingAnswer, Union['ForbiddenAnswer', 'RevokedAnswer'], UnknownAnswer]]
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
    body: OpenRequest,
) -> Optional[
    Union[
        DamagedAnswer,
        DestroyedAnswer,
        ErrorAnswer,
        InvalidAnswer,
        LockedAnswer,
        OpenedAnswer,
        PendingAnswer,
        Union["ForbiddenAnswer", "RevokedAnswer"],
        UnknownAnswer,
    ]
]:
    """Opens 1 to 1000 envelopes, each under the generation its key ID names, all or nothing.

     Keys are looked up in item order; the first that is not `ready`
    decides the answer. An envelope that does not open (wrong key,
    account or aad, or altered) is `invalid`.

    Args:
        user (str):
        body (OpenRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[DamagedAnswer, DestroyedAnswer, ErrorAnswer, InvalidAnswer, LockedAnswer, OpenedAnswer, PendingAnswer, Union['ForbiddenAnswer', 'RevokedAnswer'], UnknownAnswer]
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
    body: OpenRequest,
) -> Response[
    Union[
        DamagedAnswer,
        DestroyedAnswer,
        ErrorAnswer,
        InvalidAnswer,
        LockedAnswer,
        OpenedAnswer,
        PendingAnswer,
        Union["ForbiddenAnswer", "RevokedAnswer"],
        UnknownAnswer,
    ]
]:
    """Opens 1 to 1000 envelopes, each under the generation its key ID names, all or nothing.

     Keys are looked up in item order; the first that is not `ready`
    decides the answer. An envelope that does not open (wrong key,
    account or aad, or altered) is `invalid`.

    Args:
        user (str):
        body (OpenRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[DamagedAnswer, DestroyedAnswer, ErrorAnswer, InvalidAnswer, LockedAnswer, OpenedAnswer, PendingAnswer, Union['ForbiddenAnswer', 'RevokedAnswer'], UnknownAnswer]]
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
    body: OpenRequest,
) -> Optional[
    Union[
        DamagedAnswer,
        DestroyedAnswer,
        ErrorAnswer,
        InvalidAnswer,
        LockedAnswer,
        OpenedAnswer,
        PendingAnswer,
        Union["ForbiddenAnswer", "RevokedAnswer"],
        UnknownAnswer,
    ]
]:
    """Opens 1 to 1000 envelopes, each under the generation its key ID names, all or nothing.

     Keys are looked up in item order; the first that is not `ready`
    decides the answer. An envelope that does not open (wrong key,
    account or aad, or altered) is `invalid`.

    Args:
        user (str):
        body (OpenRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[DamagedAnswer, DestroyedAnswer, ErrorAnswer, InvalidAnswer, LockedAnswer, OpenedAnswer, PendingAnswer, Union['ForbiddenAnswer', 'RevokedAnswer'], UnknownAnswer]
    """

    return (
        await asyncio_detailed(
            user=user,
            client=client,
            body=body,
        )
    ).parsed
