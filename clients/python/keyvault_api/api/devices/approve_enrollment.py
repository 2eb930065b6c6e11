from http import HTTPStatus
from typing import Any, Optional, Union

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.approve_request import ApproveRequest
from ...models.approved_answer import ApprovedAnswer
from ...models.damaged_answer import DamagedAnswer
from ...models.denied_answer import DeniedAnswer
from ...models.error_answer import ErrorAnswer
from ...models.forbidden_answer import ForbiddenAnswer
from ...models.invalid_answer import InvalidAnswer
from ...models.locked_answer import LockedAnswer
from ...models.unknown_answer import UnknownAnswer
from ...types import Response


def _get_kwargs(
    user: str,
    device_id: str,
    *,
    body: ApproveRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/accounts/{user}/enrollments/{device_id}/approve".format(
            user=user,
            device_id=device_id,
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
        ApprovedAnswer,
        DamagedAnswer,
        DeniedAnswer,
        ErrorAnswer,
        ForbiddenAnswer,
        InvalidAnswer,
        LockedAnswer,
        UnknownAnswer,
    ]
]:
    if response.status_code == 200:
        response_200 = ApprovedAnswer.from_dict(response.json())

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
        ApprovedAnswer,
        DamagedAnswer,
        DeniedAnswer,
        ErrorAnswer,
        ForbiddenAnswer,
        InvalidAnswer,
        LockedAnswer,
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
    body: ApproveRequest,
) -> Response[
    Union[
        ApprovedAnswer,
        DamagedAnswer,
        DeniedAnswer,
        ErrorAnswer,
        ForbiddenAnswer,
        InvalidAnswer,
        LockedAnswer,
        UnknownAnswer,
    ]
]:
    """Runs the pairing exchange with the typed code and, once confirmed, approves the device.

     Waits up to 30 s for the new device's confirmation. `denied`: the
    code did not match, or this request's code was already tried here.
    `invalid`: a malformed device ID or code, this device not trusted,
    no answer in time, or an answer to another response to the request
    (another trusted device's, or this device's before a restart). `unknown`: no live request from that
    device.
    `locked`: this device is locked.

    Args:
        user (str):
        device_id (str): 32 lowercase hex characters (a key ID or a device ID).
        body (ApproveRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ApprovedAnswer, DamagedAnswer, DeniedAnswer, ErrorAnswer, ForbiddenAnswer, InvalidAnswer, LockedAnswer, UnknownAnswer]]
    """

    kwargs = _get_kwargs(
        user=user,
        device_id=device_id,
        body=body,
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
    body: ApproveRequest,
) -> Optional[
    Union[
        ApprovedAnswer,
        DamagedAnswer,
        DeniedAnswer,
        ErrorAnswer,
        ForbiddenAnswer,
        InvalidAnswer,
        LockedAnswer,
        UnknownAnswer,
    ]
]:
    """Runs the pairing exchange with the typed code and, once confirmed, approves the device.

     Waits up to 30 s for the new device's confirmation. `denied`: the
    code did not match, or this request's code was already tried here.
    `invalid`: a malformed device ID or code, this device not trusted,
    no answer in time, or an answer to another response to the request
    (another trusted device's, or this device's before a restart). `unknown`: no live request from that
    device.
    `locked`: this device is locked.

    Args:
        user (str):
        device_id (str): 32 lowercase hex characters (a key ID or a device ID).
        body (ApproveRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ApprovedAnswer, DamagedAnswer, DeniedAnswer, ErrorAnswer, ForbiddenAnswer, InvalidAnswer, LockedAnswer, UnknownAnswer]
    """

    return sync_detailed(
        user=user,
        device_id=device_id,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    user: str,
    device_id: str,
    *,
    client: Union[AuthenticatedClient, Client],
    body: ApproveRequest,
) -> Response[
    Union[
        ApprovedAnswer,
        DamagedAnswer,
        DeniedAnswer,
        ErrorAnswer,
        ForbiddenAnswer,
        InvalidAnswer,
        LockedAnswer,
        UnknownAnswer,
    ]
]:
    """Runs the pairing exchange with the typed code and, once confirmed, approves the device.

     Waits up to 30 s for the new device's confirmation. `denied`: the
    code did not match, or this request's code was already tried here.
    `invalid`: a malformed device ID or code, this device not trusted,
    no answer in time, or an answer to another response to the request
    (another trusted device's, or this device's before a restart). `unknown`: no live request from that
    device.
    `locked`: this device is locked.

    Args:
        user (str):
        device_id (str): 32 lowercase hex characters (a key ID or a device ID).
        body (ApproveRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ApprovedAnswer, DamagedAnswer, DeniedAnswer, ErrorAnswer, ForbiddenAnswer, InvalidAnswer, LockedAnswer, UnknownAnswer]]
    """

    kwargs = _get_kwargs(
        user=user,
        device_id=device_id,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    user: str,
    device_id: str,
    *,
    client: Union[AuthenticatedClient, Client],
    body: ApproveRequest,
) -> Optional[
    Union[
        ApprovedAnswer,
        DamagedAnswer,
        DeniedAnswer,
        ErrorAnswer,
        ForbiddenAnswer,
        InvalidAnswer,
        LockedAnswer,
        UnknownAnswer,
    ]
]:
    """Runs the pairing exchange with the typed code and, once confirmed, approves the device.

     Waits up to 30 s for the new device's confirmation. `denied`: the
    code did not match, or this request's code was already tried here.
    `invalid`: a malformed device ID or code, this device not trusted,
    no answer in time, or an answer to another response to the request
    (another trusted device's, or this device's before a restart). `unknown`: no live request from that
    device.
    `locked`: this device is locked.

    Args:
        user (str):
        device_id (str): 32 lowercase hex characters (a key ID or a device ID).
        body (ApproveRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ApprovedAnswer, DamagedAnswer, DeniedAnswer, ErrorAnswer, ForbiddenAnswer, InvalidAnswer, LockedAnswer, UnknownAnswer]
    """

    return (
        await asyncio_detailed(
            user=user,
            device_id=device_id,
            client=client,
            body=body,
        )
    ).parsed
