from collections.abc import Mapping
from typing import (
    Any,
    Literal,
    TypeVar,
    cast,
)

from attrs import define as _attrs_define

T = TypeVar("T", bound="DeletedAnswer")


@_attrs_define
class DeletedAnswer:
    """
    Attributes:
        state (Literal['ready']):
        account (str):
        everywhere (bool):
    """

    state: Literal["ready"]
    account: str
    everywhere: bool

    def to_dict(self) -> dict[str, Any]:
        state = self.state

        account = self.account

        everywhere = self.everywhere

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "state": state,
                "account": account,
                "everywhere": everywhere,
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

        everywhere = d.pop("everywhere")

        deleted_answer = cls(
            state=state,
            account=account,
            everywhere=everywhere,
        )

        return deleted_answer
