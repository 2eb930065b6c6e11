from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="ServerAnswerLimits")


@_attrs_define
class ServerAnswerLimits:
    """
    Attributes:
        max_connections (int):
        request_timeout_seconds (float):
        idle_timeout_seconds (float):
        max_body_bytes (int):
    """

    max_connections: int
    request_timeout_seconds: float
    idle_timeout_seconds: float
    max_body_bytes: int

    def to_dict(self) -> dict[str, Any]:
        max_connections = self.max_connections

        request_timeout_seconds = self.request_timeout_seconds

        idle_timeout_seconds = self.idle_timeout_seconds

        max_body_bytes = self.max_body_bytes

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "maxConnections": max_connections,
                "requestTimeoutSeconds": request_timeout_seconds,
                "idleTimeoutSeconds": idle_timeout_seconds,
                "maxBodyBytes": max_body_bytes,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        max_connections = d.pop("maxConnections")

        request_timeout_seconds = d.pop("requestTimeoutSeconds")

        idle_timeout_seconds = d.pop("idleTimeoutSeconds")

        max_body_bytes = d.pop("maxBodyBytes")

        server_answer_limits = cls(
            max_connections=max_connections,
            request_timeout_seconds=request_timeout_seconds,
            idle_timeout_seconds=idle_timeout_seconds,
            max_body_bytes=max_body_bytes,
        )

        return server_answer_limits
