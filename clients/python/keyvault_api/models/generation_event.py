from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="GenerationEvent")


@_attrs_define
class GenerationEvent:
    """`key-ready` (the key is stored here) and `rotated` (the announce reached this device). `generation` is a number, as
    in every other answer.

        Attributes:
            generation (int):
            key_id (str): 32 lowercase hex characters (a key ID or a device ID).
    """

    generation: int
    key_id: str

    def to_dict(self) -> dict[str, Any]:
        generation = self.generation

        key_id = self.key_id

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "generation": generation,
                "keyId": key_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        generation = d.pop("generation")

        key_id = d.pop("keyId")

        generation_event = cls(
            generation=generation,
            key_id=key_id,
        )

        return generation_event
