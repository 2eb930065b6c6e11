from collections.abc import Mapping
from typing import (
    Any,
    Literal,
    TypeVar,
    cast,
)

from attrs import define as _attrs_define

T = TypeVar("T", bound="OpenedAnswer")


@_attrs_define
class OpenedAnswer:
    """
    Attributes:
        state (Literal['ready']):
        account (str):
        plaintexts (list[str]):
    """

    state: Literal["ready"]
    account: str
    plaintexts: list[str]

    def to_dict(self) -> dict[str, Any]:
        state = self.state

        account = self.account

        plaintexts = self.plaintexts

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "state": state,
                "account": account,
                "plaintexts": plaintexts,
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

        plaintexts = cast(list[str], d.pop("plaintexts"))

        opened_answer = cls(
            state=state,
            account=account,
            plaintexts=plaintexts,
        )

        return opened_answer
