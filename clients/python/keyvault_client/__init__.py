"""keyvault_client: the hand-written layer over keyvault_api (generated from
docs/openapi.yaml): the checked Unix-socket transport, ready_key and the event stream."""

from .client import KeyNotReady, KeyVault, Refusal
from .events import Event, parse_event_stream
from .transport import (
    UnixSocketTransport,
    UnknownDaemonUser,
    WrongPeer,
    check_peer,
    default_socket_path,
    expected_daemon_uid,
    peer_uid,
)

__all__ = [
    "KeyVault",
    "Refusal",
    "KeyNotReady",
    "Event",
    "parse_event_stream",
    "UnixSocketTransport",
    "WrongPeer",
    "UnknownDaemonUser",
    "check_peer",
    "default_socket_path",
    "expected_daemon_uid",
    "peer_uid",
]
