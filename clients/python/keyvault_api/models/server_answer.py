from collections.abc import Mapping
from typing import (
    TYPE_CHECKING,
    Any,
    Literal,
    TypeVar,
    cast,
)

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.server_answer_connections import ServerAnswerConnections
    from ..models.server_answer_held import ServerAnswerHeld
    from ..models.server_answer_limits import ServerAnswerLimits


T = TypeVar("T", bound="ServerAnswer")


@_attrs_define
class ServerAnswer:
    """
    Attributes:
        state (Literal['ready']):
        limits (ServerAnswerLimits):
        connections (ServerAnswerConnections):
        held (ServerAnswerHeld):
    """

    state: Literal["ready"]
    limits: "ServerAnswerLimits"
    connections: "ServerAnswerConnections"
    held: "ServerAnswerHeld"

    def to_dict(self) -> dict[str, Any]:
        state = self.state

        limits = self.limits.to_dict()

        connections = self.connections.to_dict()

        held = self.held.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "state": state,
                "limits": limits,
                "connections": connections,
                "held": held,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.server_answer_connections import ServerAnswerConnections
        from ..models.server_answer_held import ServerAnswerHeld
        from ..models.server_answer_limits import ServerAnswerLimits

        d = dict(src_dict)
        state = cast(Literal["ready"], d.pop("state"))
        if state != "ready":
            raise ValueError(f"state must match const 'ready', got '{state}'")

        limits = ServerAnswerLimits.from_dict(d.pop("limits"))

        connections = ServerAnswerConnections.from_dict(d.pop("connections"))

        held = ServerAnswerHeld.from_dict(d.pop("held"))

        server_answer = cls(
            state=state,
            limits=limits,
            connections=connections,
            held=held,
        )

        return server_answer
