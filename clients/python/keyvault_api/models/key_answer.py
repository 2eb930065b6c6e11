from collections.abc import Mapping
from typing import (
    Any,
    Literal,
    TypeVar,
    cast,
)

from attrs import define as _attrs_define

T = TypeVar("T", bound="KeyAnswer")


@_attrs_define
class KeyAnswer:
    """
    Attributes:
        state (Literal['ready']):
        account (str):
        generation (int):
        key_id (str): 32 lowercase hex characters (a key ID or a device ID).
        key (str): The 32 key bytes, base64 (44 characters).
        created_at (str): RFC 3339, UTC, milliseconds.
        current (bool):
    """

    state: Literal["ready"]
    account: str
    generation: int
    key_id: str
    key: str
    created_at: str
    current: bool

    def to_dict(self) -> dict[str, Any]:
        state = self.state

        account = self.account

        generation = self.generation

        key_id = self.key_id

        key = self.key

        created_at = self.created_at

        current = self.current

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "state": state,
                "account": account,
                "generation": generation,
                "keyId": key_id,
                "key": key,
                "createdAt": created_at,
                "current": current,
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

        key = d.pop("key")

        created_at = d.pop("createdAt")

        current = d.pop("current")

        key_answer = cls(
            state=state,
            account=account,
            generation=generation,
            key_id=key_id,
            key=key,
            created_at=created_at,
            current=current,
        )

        return key_answer
