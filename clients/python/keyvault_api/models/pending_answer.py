from collections.abc import Mapping
from typing import (
    Any,
    Literal,
    TypeVar,
    Union,
    cast,
)

from attrs import define as _attrs_define

from ..models.pending_answer_reason import PendingAnswerReason
from ..types import UNSET, Unset

T = TypeVar("T", bound="PendingAnswer")


@_attrs_define
class PendingAnswer:
    """
    Attributes:
        state (Literal['pending']):
        reason (PendingAnswerReason): `awaiting-approval`: this device asked to join and waits for a
            trusted device; `code-mismatch`: its pairing exchange failed (or
            a restart ended it), enroll again; `awaiting-delivery`: the key's
            share has not arrived; `awaiting-relay`: this device founded the
            account and the relay has not taken it yet.
        since (str): RFC 3339, UTC, milliseconds.
        retry_after (int): The same value as the Retry-After header.
        pairing_code (Union[Unset, str]): Key reads with `awaiting-approval` only: the code this device shows
            (the one `enroll` answered), for an app to show the person. Left
            out when the device has none: it is kept in memory only.
    """

    state: Literal["pending"]
    reason: PendingAnswerReason
    since: str
    retry_after: int
    pairing_code: Union[Unset, str] = UNSET

    def to_dict(self) -> dict[str, Any]:
        state = self.state

        reason = self.reason.value

        since = self.since

        retry_after = self.retry_after

        pairing_code = self.pairing_code

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "state": state,
                "reason": reason,
                "since": since,
                "retryAfter": retry_after,
            }
        )
        if pairing_code is not UNSET:
            field_dict["pairingCode"] = pairing_code

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        state = cast(Literal["pending"], d.pop("state"))
        if state != "pending":
            raise ValueError(f"state must match const 'pending', got '{state}'")

        reason = PendingAnswerReason(d.pop("reason"))

        since = d.pop("since")

        retry_after = d.pop("retryAfter")

        pairing_code = d.pop("pairingCode", UNSET)

        pending_answer = cls(
            state=state,
            reason=reason,
            since=since,
            retry_after=retry_after,
            pairing_code=pairing_code,
        )

        return pending_answer
