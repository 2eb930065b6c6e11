"""KeyVault: the generated keyvault_api client on the checked Unix socket, with the few
calls an app's sync engine needs done the way docs/CLIENT.md describes."""

from __future__ import annotations

import base64
import json
import time
from typing import Any, Dict, Iterator, Optional, Union

import httpx

from keyvault_api import Client
from keyvault_api.api.keys import read_current_key, read_key_by_generation, read_key_by_id

from .events import Event, parse_event_stream
from .transport import UnixSocketTransport

__all__ = ["KeyVault", "Refusal", "KeyNotReady"]


class Refusal(Exception):
    """The daemon answered another state than ``ready`` (docs/API.md, "Answers"). Switch on
    ``state``; ``message`` is a sentence for a person, not an interface."""

    def __init__(self, state: str, message: str, status: int, body: Optional[Dict[str, Any]] = None):
        self.state, self.message, self.status, self.body = state, message, status, body or {}
        super().__init__(f"{state} ({status}): {message}")


class KeyNotReady(Refusal, TimeoutError):
    """ready_key's time ran out while the key was still ``pending`` or ``locked``
    (``state``; for ``pending``, ``reason`` and ``retry_after`` as last answered)."""

    def __init__(self, state: str, message: str, status: int, body=None, retry_after: Optional[int] = None):
        super().__init__(state, message, status, body)
        self.reason = (body or {}).get("reason")
        self.retry_after = retry_after


def _retry_after(response: httpx.Response) -> Optional[int]:
    value = response.headers.get("Retry-After", "")
    return int(value) if value.isdigit() else None


def _body(response: httpx.Response) -> Dict[str, Any]:
    try:
        body = json.loads(response.content)
    except ValueError:
        body = None
    if not isinstance(body, dict) or not isinstance(body.get("state"), str):
        raise Refusal("error", f"the daemon's answer is not a JSON object with a state (HTTP {response.status_code})", response.status_code)
    return body


class KeyVault:
    """A client of one daemon. Make one and keep it: it keeps up to 8 connections
    between requests, each checked (SO_PEERCRED) when it was made.

    ``socket_path``: else $KEYVAULT_SOCKET, else the daemon's default (docs/API.md).
    ``daemon_uid``: a uid or user name, else $KEYVAULT_DAEMON_UID, else this process's uid.
    """

    def __init__(self, socket_path: Optional[str] = None, daemon_uid: Union[int, str, None] = None, timeout: float = 60.0):
        self.transport = UnixSocketTransport(socket_path, daemon_uid)
        self.socket_path = self.transport.path
        # base_url's host is not checked by the daemon; curl sends localhost too.
        self.api = Client(
            base_url="http://localhost",
            timeout=httpx.Timeout(timeout, connect=5.0),
            httpx_args={"transport": self.transport},
            raise_on_unexpected_status=False,
        )

    @property
    def http(self) -> httpx.Client:
        """The httpx client the generated calls use (for any request the generated
        functions do not make, such as a streamed one)."""
        return self.api.get_httpx_client()

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> "KeyVault":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # Keys

    def read_key(self, account: str, selector: Union[str, int] = "current", wait: int = 0) -> httpx.Response:
        """One key read, as answered: ``selector`` is ``"current"``, a generation number,
        or a key ID (32 lowercase hex characters)."""
        if selector == "current":
            return read_current_key.sync_detailed(account, client=self.api, wait=wait)
        if isinstance(selector, int):
            return read_key_by_generation.sync_detailed(account, selector, client=self.api, wait=wait)
        return read_key_by_id.sync_detailed(account, selector, client=self.api, wait=wait)

    def ready_key(self, account: str, timeout: float = 60.0, selector: Union[str, int] = "current", hold: int = 30) -> bytes:
        """The key's 32 bytes, once this device can read it, within ``timeout`` seconds.

        Rides out ``pending`` (reads held with ``?wait=``, at most ``hold`` s, so the daemon
        answers the moment the key lands; a daemon whose ``max_wait_seconds`` is shorter
        answers ``invalid``, and the hold is halved down to reads that do not wait, which
        sleep the answer's ``Retry-After``), ``locked`` (asked again, from every 50 ms to
        once a second, until someone unlocks), ``throttled`` and a full daemon (their
        ``Retry-After``) and a daemon not answering yet. Raises KeyNotReady when the time
        runs out, Refusal for any other state (waiting does not cure it), WrongPeer if
        the socket is served by another uid."""
        deadline = time.monotonic() + timeout
        locked_pause = 0.05
        while True:
            remaining = deadline - time.monotonic()
            wait = max(0, min(hold, int(remaining)))
            try:
                response = self.read_key(account, selector, wait)
            except httpx.ConnectError:
                # Nothing was sent: the daemon is not (yet) listening. Ask again.
                if time.monotonic() + locked_pause >= deadline:
                    raise
                time.sleep(locked_pause)
                locked_pause = min(1.0, locked_pause * 2)
                continue
            body = _body(response)
            state = body["state"]
            if state == "ready":
                return base64.b64decode(body["key"], validate=True)
            if state == "invalid" and wait > 0:
                hold = wait // 2  # the daemon's max_wait_seconds may be shorter
                continue
            retry_after = _retry_after(response)
            if state == "pending":
                pause = 0.0 if wait > 0 else float(retry_after or 1)
            elif state == "locked":
                pause, locked_pause = locked_pause, min(1.0, locked_pause * 2)
            elif state in ("throttled",) or (state == "error" and response.status_code == 503):
                pause = float(retry_after or 1)
            else:
                raise Refusal(state, body.get("error", ""), response.status_code, body)
            remaining = deadline - time.monotonic()
            if remaining <= 0 or pause >= remaining:
                if state in ("pending", "locked"):
                    message = body.get("error") or f"the key is still {state} ({body.get('reason', '')}) after {timeout} s"
                    raise KeyNotReady(state, message, response.status_code, body, retry_after)
                raise Refusal(state, body.get("error", ""), response.status_code, body)
            if pause:
                time.sleep(pause)

    # Events

    def events(self, account: str, last_event_id: Optional[str] = None) -> Iterator[Event]:
        """The account's events (docs/API.md, "Devices and enrollment"), as they come, parsed.
        The stream's first refusal (unknown account, forbidden) raises Refusal; it ends when
        the daemon ends it (a ``forbidden`` event is yielded first when a policy reload
        takes ``subscribe`` away). Close the generator to close its connection."""
        headers = {"Accept": "text/event-stream"}
        if last_event_id:
            headers["Last-Event-ID"] = last_event_id
        # Heartbeat comments come every 15 s: a read that waits longer means a dead peer.
        timeout = httpx.Timeout(5.0, read=45.0)
        with self.http.stream("GET", f"/v1/accounts/{account}/events", headers=headers, timeout=timeout) as response:
            if response.status_code != 200:
                response.read()
                body = _body(response)
                raise Refusal(body["state"], body.get("error", ""), response.status_code, body)
            yield from parse_event_stream(response.iter_lines())
