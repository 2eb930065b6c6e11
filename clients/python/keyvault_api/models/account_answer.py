from collections.abc import Mapping
from typing import (
    TYPE_CHECKING,
    Any,
    Literal,
    TypeVar,
    cast,
)

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.account_status import AccountStatus


T = TypeVar("T", bound="AccountAnswer")


@_attrs_define
class AccountAnswer:
    """
    Attributes:
        state (Literal['ready']):
        account (AccountStatus):
    """

    state: Literal["ready"]
    account: "AccountStatus"

    def to_dict(self) -> dict[str, Any]:
        state = self.state

        account = self.account.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "state": state,
                "account": account,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.account_status import AccountStatus

        d = dict(src_dict)
        state = cast(Literal["ready"], d.pop("state"))
        if state != "ready":
            raise ValueError(f"state must match const 'ready', got '{state}'")

        account = AccountStatus.from_dict(d.pop("account"))

        account_answer = cls(
            state=state,
            account=account,
        )

        return account_answer
