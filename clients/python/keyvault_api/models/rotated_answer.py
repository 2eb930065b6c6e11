from collections.abc import Mapping
from typing import (
    Any,
    Literal,
    TypeVar,
    Union,
    cast,
)

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="RotatedAnswer")


@_attrs_define
class RotatedAnswer:
    """
    Attributes:
        state (Literal['ready']):
        generation (int):
        key_id (str): 32 lowercase hex characters (a key ID or a device ID).
        promoted (bool):
        devices (list[str]): The other trusted devices the new generation was sealed to.
        queued (bool):
        note (Union[Unset, str]): Why something waits (with `queued: true`).
    """

    state: Literal["ready"]
    generation: int
    key_id: str
    promoted: bool
    devices: list[str]
    queued: bool
    note: Union[Unset, str] = UNSET

    def to_dict(self) -> dict[str, Any]:
        state = self.state

        generation = self.generation

        key_id = self.key_id

        promoted = self.promoted

        devices = self.devices

        queued = self.queued

        note = self.note

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "state": state,
                "generation": generation,
                "keyId": key_id,
                "promoted": promoted,
                "devices": devices,
                "queued": queued,
            }
        )
        if note is not UNSET:
            field_dict["note"] = note

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        state = cast(Literal["ready"], d.pop("state"))
        if state != "ready":
            raise ValueError(f"state must match const 'ready', got '{state}'")

        generation = d.pop("generation")

        key_id = d.pop("keyId")

        promoted = d.pop("promoted")

        devices = cast(list[str], d.pop("devices"))

        queued = d.pop("queued")

        note = d.pop("note", UNSET)

        rotated_answer = cls(
            state=state,
            generation=generation,
            key_id=key_id,
            promoted=promoted,
            devices=devices,
            queued=queued,
            note=note,
        )

        return rotated_answer
