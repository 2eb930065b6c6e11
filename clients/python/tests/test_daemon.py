"""The client against a real keyvaultd (conftest.py starts it)."""

from __future__ import annotations

import base64
import os
import queue
import threading
import time

import pytest

from keyvault_api.api.accounts import create_account, lock, unlock
from keyvault_api.api.daemon import health, server
from keyvault_api.api.devices import approve_enrollment, enroll, list_enrollments
from keyvault_api.api.rotation import rotate
from keyvault_api.models import (
    AccountAnswer,
    ApproveRequest,
    CreateAccountRequest,
    EnrollRequest,
    HealthAnswer,
    PassphraseRequest,
    RotateRequest,
    RotateRequestPromote,
)
from keyvault_client import KeyNotReady, KeyVault, Refusal, WrongPeer


def create(device, account: str, passphrase: str = "pa") -> None:
    answer = create_account.sync(client=device.client.api, body=CreateAccountRequest(user=account, passphrase=passphrase))
    assert isinstance(answer, AccountAnswer), answer


def current_key(device, account: str) -> bytes:
    status, body, _ = device.request("GET", f"/v1/accounts/{account}/keys/current")
    assert status == 200, body
    return base64.b64decode(body["key"])


def in_thread(function, *args, **kwargs):
    """Runs function in a thread; answers a function that joins it and returns its result (or raises)."""
    result = {}

    def run():
        try:
            result["value"] = function(*args, **kwargs)
        except BaseException as error:  # handed to the test's thread
            result["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()

    def join(timeout: float = 60):
        thread.join(timeout)
        assert not thread.is_alive(), "the thread did not end"
        if "error" in result:
            raise result["error"]
        return result["value"]

    return join


def test_generated_calls_go_over_the_checked_socket(device):
    answer = health.sync(client=device.client.api)
    assert isinstance(answer, HealthAnswer)
    assert answer.state == "ready" and answer.version


def test_ready_key_reads_a_ready_key(device):
    create(device, "notes")
    key = device.client.ready_key("notes", timeout=10)
    assert len(key) == 32
    assert key == current_key(device, "notes")
    assert device.client.ready_key("notes", timeout=10, selector=1) == key


def test_ready_key_refuses_what_waiting_does_not_cure(device):
    with pytest.raises(Refusal) as refused:
        device.client.ready_key("nobody", timeout=5)
    assert refused.value.state == "unknown" and refused.value.status == 404
    assert not isinstance(refused.value, KeyNotReady)


def test_pending_with_retry_after_then_the_key_once_approved(circle):
    a, b = circle.device(), circle.device()
    create(a, "notes", "pa")
    ticket = enroll.sync_detailed("notes", client=b.client.api, body=EnrollRequest(passphrase="pb", device_name="b"))
    assert ticket.status_code == 202, ticket.content
    device_id, code = ticket.parsed.device_id, ticket.parsed.pairing_code

    # A key read on the new device: pending, awaiting approval, with Retry-After.
    status, body, response = b.request("GET", "/v1/accounts/notes/keys/current")
    assert status == 202 and body["state"] == "pending" and body["reason"] == "awaiting-approval", body
    assert response.headers["Retry-After"].isdigit() and int(response.headers["Retry-After"]) >= 1
    assert body["retryAfter"] == int(response.headers["Retry-After"])

    # ready_key rides it out until its time runs out, then says it was still pending.
    started = time.monotonic()
    with pytest.raises(KeyNotReady) as not_ready:
        b.client.ready_key("notes", timeout=2)
    assert not_ready.value.state == "pending" and not_ready.value.reason == "awaiting-approval"
    assert not_ready.value.retry_after and not_ready.value.retry_after >= 1
    assert 1 <= time.monotonic() - started < 10

    # Meanwhile a trusted device approves it: the waiting ready_key gets the circle's key.
    waiting = in_thread(b.client.ready_key, "notes", timeout=90)
    deadline = time.monotonic() + 30
    while True:
        listed = list_enrollments.sync("notes", client=a.client.api)
        if any(item.device_id == device_id for item in getattr(listed, "enrollments", []) or []):
            break
        assert time.monotonic() < deadline, f"A never listed B's request: {listed}"
        time.sleep(0.1)
    approved = approve_enrollment.sync_detailed("notes", device_id, client=a.client.api, body=ApproveRequest(pairing_code=code))
    assert approved.status_code == 200, approved.content
    assert waiting(90) == current_key(a, "notes")


def test_locked_is_waited_out_until_an_unlock(device):
    create(device, "notes", "pa")
    key = current_key(device, "notes")
    assert lock.sync_detailed("notes", client=device.client.api).status_code == 200

    with pytest.raises(KeyNotReady) as not_ready:
        device.client.ready_key("notes", timeout=1)
    assert not_ready.value.state == "locked" and not_ready.value.status == 423

    waiting = in_thread(device.client.ready_key, "notes", timeout=30)
    time.sleep(0.5)
    unlocked = unlock.sync_detailed("notes", client=device.client.api, body=PassphraseRequest(passphrase="pa"))
    assert unlocked.status_code == 200, unlocked.content
    assert waiting(30) == key


def test_a_rotation_is_an_event_on_the_stream(device):
    create(device, "notes")
    events = queue.Queue()

    def follow():
        for event in device.client.events("notes"):
            events.put(event)
            if event.name == "rotated":
                return  # closes the stream

    following = in_thread(follow)
    # The stream is held once the daemon counts it.
    deadline = time.monotonic() + 10
    while server.sync(client=device.client.api).held.event_streams < 1:
        assert time.monotonic() < deadline, "the event stream was never held"
        time.sleep(0.05)

    rotated = rotate.sync_detailed("notes", client=device.client.api, body=RotateRequest(promote=RotateRequestPromote.NOW))
    assert rotated.status_code == 200, rotated.content
    following(30)
    seen = []
    while not events.empty():
        seen.append(events.get())
    names = [event.name for event in seen]
    assert "rotated" in names, names
    event = next(event for event in seen if event.name == "rotated")
    assert event.generation == 2
    assert event.key_id == rotated.parsed.key_id
    assert event.id  # EPOCH-N, for Last-Event-ID


def test_events_of_an_unknown_account_are_refused(device):
    with pytest.raises(Refusal) as refused:
        next(iter(device.client.events("nobody")))
    assert refused.value.state == "unknown"


def test_a_daemon_of_another_uid_is_refused_before_anything_is_sent(device):
    other = KeyVault(device.socket, daemon_uid=os.geteuid() + 1)
    with pytest.raises(WrongPeer) as wrong:
        other.http.get("/v1/health")
    assert wrong.value.uid == os.geteuid() and wrong.value.expected == os.geteuid() + 1
    assert "nothing was sent" in str(wrong.value)
    with pytest.raises(WrongPeer):
        other.ready_key("notes", timeout=1)
    other.close()
