from http import HTTPStatus
from typing import Any, Optional, Union

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.damaged_answer import DamagedAnswer
from ...models.enrollments_answer import EnrollmentsAnswer
from ...models.error_answer import ErrorAnswer
from ...models.forbidden_answer import ForbiddenAnswer
from ...models.invalid_answer import InvalidAnswer
from ...models.unknown_answer import UnknownAnswer
from ...types import Response


def _get_kwargs(
    user: str,
) -> dict[str, Any]:
    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/accounts/{user}/enrollments".format(
            user=user,
        ),
    }

    return _kwargs


def _parse_response(
    *, client: Union[AuthenticatedClient, Client], response: httpx.Response
) -> Optional[
    Union[
        DamagedAnswer,
        EnrollmentsAnswer,
        ErrorAnswer,
        ForbiddenAnswer,
        InvalidAnswer,
        UnknownAnswer,
    ]
]:
    if response.status_code == 200:
        response_200 = EnrollmentsAnswer.from_dict(response.json())

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
        EnrollmentsAnswer,
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
    *,
    client: Union[AuthenticatedClient, Client],
) -> Response[
    Union[
        DamagedAnswer,
        EnrollmentsAnswer,
        ErrorAnswer,
        ForbiddenAnswer,
        InvalidAnswer,
        UnknownAnswer,
    ]
]:
    """The live requests to join, on a trusted device, oldest first.

     `invalid` if this device is not trusted in the circle (or has no circle).

    Args:
        user (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[DamagedAnswer, EnrollmentsAnswer, ErrorAnswer, ForbiddenAnswer, InvalidAnswer, UnknownAnswer]]
    """

    kwargs = _get_kwargs(
        user=user,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    user: str,
    *,
    client: Union[AuthenticatedClient, Client],
) -> Optional[
    Union[
        DamagedAnswer,
        EnrollmentsAnswer,
        ErrorAnswer,
        ForbiddenAnswer,
        InvalidAnswer,
        UnknownAnswer,
    ]
]:
    """The live requests to join, on a trusted device, oldest first.

     `invalid` if this device is not trusted in the circle (or has no circle).

    Args:
        user (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[DamagedAnswer, EnrollmentsAnswer, ErrorAnswer, ForbiddenAnswer, InvalidAnswer, UnknownAnswer]
    """

    return sync_detailed(
        user=user,
        client=client,
    ).parsed


async def asyncio_detailed(
    user: str,
    *,
    client: Union[AuthenticatedClient, Client],
) -> Response[
    Union[
        DamagedAnswer,
        EnrollmentsAnswer,
        ErrorAnswer,
        ForbiddenAnswer,
        InvalidAnswer,
        UnknownAnswer,
    ]
]:
    """The live requests to join, on a trusted device, oldest first.

     `invalid` if this device is not trusted in the circle (or has no circle).

    Args:
        user (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[DamagedAnswer, EnrollmentsAnswer, ErrorAnswer, ForbiddenAnswer, InvalidAnswer, UnknownAnswer]]
    """

    kwargs = _get_kwargs(
        user=user,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    user: str,
    *,
    client: Union[AuthenticatedClient, Client],
) -> Optional[
    Union[
        DamagedAnswer,
        EnrollmentsAnswer,
        ErrorAnswer,
        ForbiddenAnswer,
        InvalidAnswer,
        UnknownAnswer,
    ]
]:
    """The live requests to join, on a trusted device, oldest first.

     `invalid` if this device is not trusted in the circle (or has no circle).

    Args:
        user (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[DamagedAnswer, EnrollmentsAnswer, ErrorAnswer, ForbiddenAnswer, InvalidAnswer, UnknownAnswer]
    """

    return (
        await asyncio_detailed(
            user=user,
            client=client,
        )
    ).parsed
