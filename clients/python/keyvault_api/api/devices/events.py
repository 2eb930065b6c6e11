from http import HTTPStatus
from typing import Any, Optional, Union

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.damaged_answer import DamagedAnswer
from ...models.error_answer import ErrorAnswer
from ...models.forbidden_answer import ForbiddenAnswer
from ...models.invalid_answer import InvalidAnswer
from ...models.unknown_answer import UnknownAnswer
from ...types import UNSET, Response, Unset


def _get_kwargs(
    user: str,
    *,
    last_event_id: Union[Unset, str] = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(last_event_id, Unset):
        headers["Last-Event-ID"] = last_event_id

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/accounts/{user}/events".format(
            user=user,
        ),
    }

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: Union[AuthenticatedClient, Client], response: httpx.Response
) -> Optional[
    Union[
        DamagedAnswer, ErrorAnswer, ForbiddenAnswer, InvalidAnswer, UnknownAnswer, str
    ]
]:
    if response.status_code == 200:
        response_200 = response.text
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
        DamagedAnswer, ErrorAnswer, ForbiddenAnswer, InvalidAnswer, UnknownAnswer, str
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
    last_event_id: Union[Unset, str] = UNSET,
) -> Response[
    Union[
        DamagedAnswer, ErrorAnswer, ForbiddenAnswer, InvalidAnswer, UnknownAnswer, str
    ]
]:
    """The account's events as a server-sent event stream, resumable by `Last-Event-ID`.

     `text/event-stream` that does not end by itself (it ends when the
    client goes away, when the daemon stops, or after a last `forbidden`
    event when a policy reload takes away `subscribe`; the connection
    then stays open for further requests). It begins with the comment
    `: keyvaultd events`, and a comment `: keep-alive` comes every 15 s.

    Each event is an `id:` line, an `event:` line and one `data:` line
    holding one JSON object (the schema `x-sse-events` names for that
    event), then an empty line.

    **Ids.** Every event has `id: <epoch>-<n>`: `epoch` is 16 lowercase
    hex characters, chosen when the daemon makes the account's stream
    buffer (so new after a daemon restart); `n` is a decimal counter of
    the account's events from 1. The daemon keeps the last 64 events of
    each account. A `resync` carries the id of the account's last event
    (`<epoch>-0` when there was none yet), so resuming from it starts at
    the next one; the last `forbidden` of a stream carries no id (it is
    no event of the account, and nothing follows it).

    **Resuming.** Without `Last-Event-ID` the stream begins with the
    next event. With it: if it names the current epoch and an event
    still buffered (or the last one), the stream begins with the events
    after it. Otherwise (another epoch, an event no longer buffered, a
    number not reached yet, or a malformed value) it begins with
    `event: resync` (`data: {}`): events may have been missed, and the
    client should read the state again (`status`, the key reads).

    Args:
        user (str):
        last_event_id (Union[Unset, str]):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[DamagedAnswer, ErrorAnswer, ForbiddenAnswer, InvalidAnswer, UnknownAnswer, str]]
    """

    kwargs = _get_kwargs(
        user=user,
        last_event_id=last_event_id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    user: str,
    *,
    client: Union[AuthenticatedClient, Client],
    last_event_id: Union[Unset, str] = UNSET,
) -> Optional[
    Union[
        DamagedAnswer, ErrorAnswer, ForbiddenAnswer, InvalidAnswer, UnknownAnswer, str
    ]
]:
    """The account's events as a server-sent event stream, resumable by `Last-Event-ID`.

     `text/event-stream` that does not end by itself (it ends when the
    client goes away, when the daemon stops, or after a last `forbidden`
    event when a policy reload takes away `subscribe`; the connection
    then stays open for further requests). It begins with the comment
    `: keyvaultd events`, and a comment `: keep-alive` comes every 15 s.

    Each event is an `id:` line, an `event:` line and one `data:` line
    holding one JSON object (the schema `x-sse-events` names for that
    event), then an empty line.

    **Ids.** Every event has `id: <epoch>-<n>`: `epoch` is 16 lowercase
    hex characters, chosen when the daemon makes the account's stream
    buffer (so new after a daemon restart); `n` is a decimal counter of
    the account's events from 1. The daemon keeps the last 64 events of
    each account. A `resync` carries the id of the account's last event
    (`<epoch>-0` when there was none yet), so resuming from it starts at
    the next one; the last `forbidden` of a stream carries no id (it is
    no event of the account, and nothing follows it).

    **Resuming.** Without `Last-Event-ID` the stream begins with the
    next event. With it: if it names the current epoch and an event
    still buffered (or the last one), the stream begins with the events
    after it. Otherwise (another epoch, an event no longer buffered, a
    number not reached yet, or a malformed value) it begins with
    `event: resync` (`data: {}`): events may have been missed, and the
    client should read the state again (`status`, the key reads).

    Args:
        user (str):
        last_event_id (Union[Unset, str]):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[DamagedAnswer, ErrorAnswer, ForbiddenAnswer, InvalidAnswer, UnknownAnswer, str]
    """

    return sync_detailed(
        user=user,
        client=client,
        last_event_id=last_event_id,
    ).parsed


async def asyncio_detailed(
    user: str,
    *,
    client: Union[AuthenticatedClient, Client],
    last_event_id: Union[Unset, str] = UNSET,
) -> Response[
    Union[
        DamagedAnswer, ErrorAnswer, ForbiddenAnswer, InvalidAnswer, UnknownAnswer, str
    ]
]:
    """The account's events as a server-sent event stream, resumable by `Last-Event-ID`.

     `text/event-stream` that does not end by itself (it ends when the
    client goes away, when the daemon stops, or after a last `forbidden`
    event when a policy reload takes away `subscribe`; the connection
    then stays open for further requests). It begins with the comment
    `: keyvaultd events`, and a comment `: keep-alive` comes every 15 s.

    Each event is an `id:` line, an `event:` line and one `data:` line
    holding one JSON object (the schema `x-sse-events` names for that
    event), then an empty line.

    **Ids.** Every event has `id: <epoch>-<n>`: `epoch` is 16 lowercase
    hex characters, chosen when the daemon makes the account's stream
    buffer (so new after a daemon restart); `n` is a decimal counter of
    the account's events from 1. The daemon keeps the last 64 events of
    each account. A `resync` carries the id of the account's last event
    (`<epoch>-0` when there was none yet), so resuming from it starts at
    the next one; the last `forbidden` of a stream carries no id (it is
    no event of the account, and nothing follows it).

    **Resuming.** Without `Last-Event-ID` the stream begins with the
    next event. With it: if it names the current epoch and an event
    still buffered (or the last one), the stream begins with the events
    after it. Otherwise (another epoch, an event no longer buffered, a
    number not reached yet, or a malformed value) it begins with
    `event: resync` (`data: {}`): events may have been missed, and the
    client should read the state again (`status`, the key reads).

    Args:
        user (str):
        last_event_id (Union[Unset, str]):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[DamagedAnswer, ErrorAnswer, ForbiddenAnswer, InvalidAnswer, UnknownAnswer, str]]
    """

    kwargs = _get_kwargs(
        user=user,
        last_event_id=last_event_id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    user: str,
    *,
    client: Union[AuthenticatedClient, Client],
    last_event_id: Union[Unset, str] = UNSET,
) -> Optional[
    Union[
        DamagedAnswer, ErrorAnswer, ForbiddenAnswer, InvalidAnswer, UnknownAnswer, str
    ]
]:
    """The account's events as a server-sent event stream, resumable by `Last-Event-ID`.

     `text/event-stream` that does not end by itself (it ends when the
    client goes away, when the daemon stops, or after a last `forbidden`
    event when a policy reload takes away `subscribe`; the connection
    then stays open for further requests). It begins with the comment
    `: keyvaultd events`, and a comment `: keep-alive` comes every 15 s.

    Each event is an `id:` line, an `event:` line and one `data:` line
    holding one JSON object (the schema `x-sse-events` names for that
    event), then an empty line.

    **Ids.** Every event has `id: <epoch>-<n>`: `epoch` is 16 lowercase
    hex characters, chosen when the daemon makes the account's stream
    buffer (so new after a daemon restart); `n` is a decimal counter of
    the account's events from 1. The daemon keeps the last 64 events of
    each account. A `resync` carries the id of the account's last event
    (`<epoch>-0` when there was none yet), so resuming from it starts at
    the next one; the last `forbidden` of a stream carries no id (it is
    no event of the account, and nothing follows it).

    **Resuming.** Without `Last-Event-ID` the stream begins with the
    next event. With it: if it names the current epoch and an event
    still buffered (or the last one), the stream begins with the events
    after it. Otherwise (another epoch, an event no longer buffered, a
    number not reached yet, or a malformed value) it begins with
    `event: resync` (`data: {}`): events may have been missed, and the
    client should read the state again (`status`, the key reads).

    Args:
        user (str):
        last_event_id (Union[Unset, str]):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[DamagedAnswer, ErrorAnswer, ForbiddenAnswer, InvalidAnswer, UnknownAnswer, str]
    """

    return (
        await asyncio_detailed(
            user=user,
            client=client,
            last_event_id=last_event_id,
        )
    ).parsed
