from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="ServerAnswerHeld")


@_attrs_define
class ServerAnswerHeld:
    """
    Attributes:
        waiting_reads (int):
        event_streams (int):
        hub_waiters (int):
        hub_listeners (int):
        account_owners (int):
    """

    waiting_reads: int
    event_streams: int
    hub_waiters: int
    hub_listeners: int
    account_owners: int

    def to_dict(self) -> dict[str, Any]:
        waiting_reads = self.waiting_reads

        event_streams = self.event_streams

        hub_waiters = self.hub_waiters

        hub_listeners = self.hub_listeners

        account_owners = self.account_owners

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "waitingReads": waiting_reads,
                "eventStreams": event_streams,
                "hubWaiters": hub_waiters,
                "hubListeners": hub_listeners,
                "accountOwners": account_owners,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        waiting_reads = d.pop("waitingReads")

        event_streams = d.pop("eventStreams")

        hub_waiters = d.pop("hubWaiters")

        hub_listeners = d.pop("hubListeners")

        account_owners = d.pop("accountOwners")

        server_answer_held = cls(
            waiting_reads=waiting_reads,
            event_streams=event_streams,
            hub_waiters=hub_waiters,
            hub_listeners=hub_listeners,
            account_owners=account_owners,
        )

        return server_answer_held
