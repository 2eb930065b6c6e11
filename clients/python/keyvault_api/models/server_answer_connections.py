from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="ServerAnswerConnections")


@_attrs_define
class ServerAnswerConnections:
    """
    Attributes:
        open_ (int):
        requests_in_progress (int):
        refused_waiting (int):
        refused_total (int):
        closed_for_room_total (int):
        forbidden_by_policy_total (int):
        max_per_caller (int):
    """

    open_: int
    requests_in_progress: int
    refused_waiting: int
    refused_total: int
    closed_for_room_total: int
    forbidden_by_policy_total: int
    max_per_caller: int

    def to_dict(self) -> dict[str, Any]:
        open_ = self.open_

        requests_in_progress = self.requests_in_progress

        refused_waiting = self.refused_waiting

        refused_total = self.refused_total

        closed_for_room_total = self.closed_for_room_total

        forbidden_by_policy_total = self.forbidden_by_policy_total

        max_per_caller = self.max_per_caller

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "open": open_,
                "requestsInProgress": requests_in_progress,
                "refusedWaiting": refused_waiting,
                "refusedTotal": refused_total,
                "closedForRoomTotal": closed_for_room_total,
                "forbiddenByPolicyTotal": forbidden_by_policy_total,
                "maxPerCaller": max_per_caller,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        open_ = d.pop("open")

        requests_in_progress = d.pop("requestsInProgress")

        refused_waiting = d.pop("refusedWaiting")

        refused_total = d.pop("refusedTotal")

        closed_for_room_total = d.pop("closedForRoomTotal")

        forbidden_by_policy_total = d.pop("forbiddenByPolicyTotal")

        max_per_caller = d.pop("maxPerCaller")

        server_answer_connections = cls(
            open_=open_,
            requests_in_progress=requests_in_progress,
            refused_waiting=refused_waiting,
            refused_total=refused_total,
            closed_for_room_total=closed_for_room_total,
            forbidden_by_policy_total=forbidden_by_policy_total,
            max_per_caller=max_per_caller,
        )

        return server_answer_connections
