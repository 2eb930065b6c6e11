from collections.abc import Mapping
from typing import (
    Any,
    Literal,
    TypeVar,
    cast,
)

from attrs import define as _attrs_define

T = TypeVar("T", bound="IdentityNonceAnswer")


@_attrs_define
class IdentityNonceAnswer:
    """
    Attributes:
        state (Literal['ready']):
        account (str):
        nonce (str): Lowercase hex SHA-256 of the identity's Ed25519 then X25519 public keys.
    """

    state: Literal["ready"]
    account: str
    nonce: str

    def to_dict(self) -> dict[str, Any]:
        state = self.state

        account = self.account

        nonce = self.nonce

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "state": state,
                "account": account,
                "nonce": nonce,
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

        nonce = d.pop("nonce")

        identity_nonce_answer = cls(
            state=state,
            account=account,
            nonce=nonce,
        )

        return identity_nonce_answer
