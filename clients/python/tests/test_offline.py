"""The hand-written layer's parts that need no daemon."""

from __future__ import annotations

import os
import socket
import threading

import pytest

from keyvault_client import (
    KeyVault,
    UnknownDaemonUser,
    WrongPeer,
    check_peer,
    default_socket_path,
    expected_daemon_uid,
    parse_event_stream,
    peer_uid,
)


def test_check_peer_on_a_socketpair():
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with a, b:
        assert peer_uid(a) == os.geteuid()
        check_peer(a, os.geteuid())
        with pytest.raises(WrongPeer) as wrong:
            check_peer(a, os.geteuid() + 1, "/some/kv.sock")
        assert wrong.value.uid == os.geteuid()
        assert "refusing to talk to /some/kv.sock" in str(wrong.value)


def test_a_wrong_peer_gets_not_a_byte(tmp_path):
    """A listener of our own uid, expected as another: the client connects, checks and
    closes the connection unwritten."""
    path = str(tmp_path / "kv.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(1)
    received = []

    def serve():
        connection, _ = listener.accept()
        with connection:
            connection.settimeout(10)
            received.append(connection.recv(65536))  # b"" once the client closes

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    client = KeyVault(path, daemon_uid=os.geteuid() + 1)
    with pytest.raises(WrongPeer):
        client.http.get("/v1/health")
    thread.join(10)
    client.close()
    listener.close()
    assert received == [b""]


def test_default_socket_path():
    home = {"HOME": "/home/u"}
    assert default_socket_path({**home, "KEYVAULT_SOCKET": "/x/kv.sock", "XDG_RUNTIME_DIR": "/run/user/1"}) == "/x/kv.sock"
    assert default_socket_path({**home, "KEYVAULT_SOCKET": "", "XDG_RUNTIME_DIR": "/run/user/1"}) == "/run/user/1/keyvaultd.sock"
    assert default_socket_path({**home, "XDG_RUNTIME_DIR": "", "XDG_STATE_HOME": "/s"}) == "/s/keyvaultd/keyvaultd.sock"
    assert default_socket_path(home) == "/home/u/.local/state/keyvaultd/keyvaultd.sock"


def test_expected_daemon_uid():
    assert expected_daemon_uid(environ={}) == os.geteuid()
    assert expected_daemon_uid(environ={"KEYVAULT_DAEMON_UID": "998"}) == 998
    assert expected_daemon_uid(environ={"KEYVAULT_DAEMON_UID": "root"}) == 0
    assert expected_daemon_uid(42, environ={"KEYVAULT_DAEMON_UID": "998"}) == 42
    with pytest.raises(UnknownDaemonUser):
        expected_daemon_uid(environ={"KEYVAULT_DAEMON_UID": "no-such-user-here"})


def test_parse_event_stream():
    lines = [
        ": a comment",
        "id: 7-1",
        "event: rotated",
        'data: {"generation":2,"keyId":"ab"}',
        "",
        "event: locked",
        "data: {}",
        "",
        "",
        "data: x",
        "",
    ]
    events = list(parse_event_stream(lines))
    assert [e.name for e in events] == ["rotated", "locked", "message"]
    assert events[0].id == "7-1" and events[0].generation == 2 and events[0].key_id == "ab"
    assert events[1].id == "7-1"  # the last id seen stays, as the standard says
    assert events[2].raw == "x" and events[2].data == {}
