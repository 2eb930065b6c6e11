from collections.abc import Mapping
from typing import (
    Any,
    Literal,
    TypeVar,
    cast,
)

from attrs import define as _attrs_define

T = TypeVar("T", bound="SealedAnswer")


@_attrs_define
class SealedAnswer:
    """
    Attributes:
        state (Literal['ready']):
        account (str):
        generation (int):
        key_id (str): 32 lowercase hex characters (a key ID or a device ID).
        envelopes (list[str]): One per item, in order; each `0x01 || keyId || nonce || ciphertext || tag`.
    """

    state: Literal["ready"]
    account: str
    generation: int
    key_id: str
    envelopes: list[str]

    def to_dict(self) -> dict[str, Any]:
        state = self.state

        account = self.account

        generation = self.generation

        key_id = self.key_id

        envelopes = self.envelopes

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "state": state,
                "account": account,
                "generation": generation,
                "keyId": key_id,
                "envelopes": envelopes,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        state = cast(Literal["ready"], d.pop("state"))
        if state != "ready":
            raise ValueError(f"state must match const 'ready', got '{state}'")

        account = d.pop("account")

        generation = d.pop("generation")

        key_id = d.pop("keyId")

        envelopes = cast(list[str], d.pop("envelopes"))

        sealed_answer = cls(
            state=state,
            account=account,
            generation=generation,
            key_id=key_id,
            envelopes=envelopes,
        )

        return sealed_answer
