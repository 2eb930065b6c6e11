from collections.abc import Mapping
from typing import (
    Any,
    Literal,
    TypeVar,
    cast,
)

from attrs import define as _attrs_define

T = TypeVar("T", bound="EnrollPendingAnswer")


@_attrs_define
class EnrollPendingAnswer:
    """
    Attributes:
        state (Literal['pending']):
        reason (Literal['awaiting-approval']):
        device_id (str): 32 lowercase hex characters (a key ID or a device ID).
        pairing_code (str): Six digits, drawn on this device; the person types them on a trusted device.
        since (str): RFC 3339, UTC, milliseconds.
        retry_after (int):
    """

    state: Literal["pending"]
    reason: Literal["awaiting-approval"]
    device_id: str
    pairing_code: str
    since: str
    retry_after: int

    def to_dict(self) -> dict[str, Any]:
        state = self.state

        reason = self.reason

        device_id = self.device_id

        pairing_code = self.pairing_code

        since = self.since

        retry_after = self.retry_after

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "state": state,
                "reason": reason,
                "deviceId": device_id,
                "pairingCode": pairing_code,
                "since": since,
                "retryAfter": retry_after,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        state = cast(Literal["pending"], d.pop("state"))
        if state != "pending":
            raise ValueError(f"state must match const 'pending', got '{state}'")

        reason = cast(Literal["awaiting-approval"], d.pop("reason"))
        if reason != "awaiting-approval":
            raise ValueError(
                f"reason must match const 'awaiting-approval', got '{reason}'"
            )

        device_id = d.pop("deviceId")

        pairing_code = d.pop("pairingCode")

        since = d.pop("since")

        retry_after = d.pop("retryAfter")

        enroll_pending_answer = cls(
            state=state,
            reason=reason,
            device_id=device_id,
            pairing_code=pairing_code,
            since=since,
            retry_after=retry_after,
        )

        return enroll_pending_answer
