"""The Unix-socket transport, and the check of who serves the socket.

Like the Swift library (docs/CLIENT.md, "Connecting"), nothing is sent on a
connection before the kernel has said who listens at the other end
(``SO_PEERCRED``), and the connection checked is the very one that then carries
the requests: the check runs inside httpcore's connect, before httpcore hands
the connection to HTTP/1.1.
"""

from __future__ import annotations

import os
import pwd
import socket
import struct
from typing import Optional, Union

import httpcore
import httpx

__all__ = [
    "WrongPeer",
    "UnknownDaemonUser",
    "default_socket_path",
    "expected_daemon_uid",
    "peer_uid",
    "check_peer",
    "UnixSocketTransport",
]

_PEERCRED = struct.Struct("iII")  # struct ucred: pid_t pid; uid_t uid; gid_t gid


class WrongPeer(Exception):
    """The socket is served by another uid than the one expected; nothing was sent."""

    def __init__(self, path: str, uid: Optional[int], expected: int):
        self.path, self.uid, self.expected = path, uid, expected
        served = f"uid {uid}" if uid is not None else "a process whose uid could not be read"
        super().__init__(
            f"refusing to talk to {path}: it is served by {served}, not by uid {expected} as expected; "
            "another user may have taken the daemon's place (nothing was sent)"
        )


class UnknownDaemonUser(Exception):
    """$KEYVAULT_DAEMON_UID names no user of this system; nothing was sent."""


def default_socket_path(environ: Optional[dict] = None) -> str:
    """The socket as the CLI finds it (docs/API.md, "Transport"): $KEYVAULT_SOCKET when set
    and not empty, else $XDG_RUNTIME_DIR/keyvaultd.sock, else
    $XDG_STATE_HOME/keyvaultd/keyvaultd.sock, else ~/.local/state/keyvaultd/keyvaultd.sock."""
    env = os.environ if environ is None else environ
    if env.get("KEYVAULT_SOCKET"):
        return env["KEYVAULT_SOCKET"]
    if env.get("XDG_RUNTIME_DIR"):
        return os.path.join(env["XDG_RUNTIME_DIR"], "keyvaultd.sock")
    if env.get("XDG_STATE_HOME"):
        return os.path.join(env["XDG_STATE_HOME"], "keyvaultd", "keyvaultd.sock")
    home = env.get("HOME") or os.path.expanduser("~")
    return os.path.join(home, ".local", "state", "keyvaultd", "keyvaultd.sock")


def expected_daemon_uid(value: Union[int, str, None] = None, environ: Optional[dict] = None) -> int:
    """The uid the daemon must run as: ``value`` (a uid or a user name), else
    $KEYVAULT_DAEMON_UID when set and not empty (as for the CLI's --daemon-uid), else this
    process's own effective uid."""
    env = os.environ if environ is None else environ
    if value is None:
        value = env.get("KEYVAULT_DAEMON_UID") or None
    if value is None:
        return os.geteuid()
    if isinstance(value, int):
        return value
    if value.isdigit():
        return int(value)
    try:
        return pwd.getpwnam(value).pw_uid
    except KeyError:
        raise UnknownDaemonUser(f"the daemon's user {value!r} names no user of this system (nothing was sent)") from None


def peer_uid(sock: socket.socket) -> int:
    """The uid of the process at the other end of a connected Unix socket, in the kernel's word."""
    raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _PEERCRED.size)
    _pid, uid, _gid = _PEERCRED.unpack(raw)
    return uid


def check_peer(sock: socket.socket, expected_uid: int, path: str = "the socket") -> None:
    """Raises WrongPeer unless ``sock``'s peer runs as ``expected_uid``."""
    try:
        uid: Optional[int] = peer_uid(sock)
    except OSError:
        uid = None
    if uid != expected_uid:
        raise WrongPeer(path, uid, expected_uid)


class _PeerCheckingBackend(httpcore.SyncBackend):
    """httpcore's own backend, but a Unix connection is checked before it is used."""

    def __init__(self, expected_uid: int):
        self.expected_uid = expected_uid

    def connect_unix_socket(self, path, timeout=None, socket_options=None):
        stream = super().connect_unix_socket(path, timeout=timeout, socket_options=socket_options)
        sock = stream.get_extra_info("socket")
        try:
            check_peer(sock, self.expected_uid, path)
        except BaseException:
            stream.close()  # closed unwritten
            raise
        return stream


class UnixSocketTransport(httpx.HTTPTransport):
    """``httpx.HTTPTransport(uds=path)`` whose every connection is checked first (SO_PEERCRED).

    Kept connections live at most 20 s, as the Swift library's: the daemon closes one
    idle for 30 s, and a request should not meet that close on its way in.
    """

    def __init__(self, path: Optional[str] = None, daemon_uid: Union[int, str, None] = None, max_connections: int = 8):
        self.path = path or default_socket_path()
        self.expected_uid = expected_daemon_uid(daemon_uid)
        super().__init__(uds=self.path)
        self._pool = httpcore.ConnectionPool(
            uds=self.path,
            max_connections=max_connections,
            max_keepalive_connections=max_connections,
            keepalive_expiry=20.0,
            network_backend=_PeerCheckingBackend(self.expected_uid),
        )
