from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..models.pairing_failed_event_reason import PairingFailedEventReason

T = TypeVar("T", bound="PairingFailedEvent")


@_attrs_define
class PairingFailedEvent:
    """A pairing exchange ended without an approval (on the new device and on the trusted device that ran it); the new
    device shows a new code when it enrolls again.

        Attributes:
            device_id (str): 32 lowercase hex characters (a key ID or a device ID).
            reason (PairingFailedEventReason):
    """

    device_id: str
    reason: PairingFailedEventReason

    def to_dict(self) -> dict[str, Any]:
        device_id = self.device_id

        reason = self.reason.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "deviceId": device_id,
                "reason": reason,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        device_id = d.pop("deviceId")

        reason = PairingFailedEventReason(d.pop("reason"))

        pairing_failed_event = cls(
            device_id=device_id,
            reason=reason,
        )

        return pairing_failed_event
