from collections.abc import Mapping
from typing import (
    TYPE_CHECKING,
    Any,
    Literal,
    TypeVar,
    Union,
    cast,
)

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.account_status import AccountStatus
    from ..models.locked_memory import LockedMemory
    from ..models.relay_status import RelayStatus


T = TypeVar("T", bound="StatusAnswer")


@_attrs_define
class StatusAnswer:
    """
    Attributes:
        state (Literal['ready']):
        version (str):
        accounts (list['AccountStatus']): Sorted by ID; only those the caller's `status` rules cover.
        locked_memory (LockedMemory):
        relay (Union[Unset, RelayStatus]):
    """

    state: Literal["ready"]
    version: str
    accounts: list["AccountStatus"]
    locked_memory: "LockedMemory"
    relay: Union[Unset, "RelayStatus"] = UNSET

    def to_dict(self) -> dict[str, Any]:
        state = self.state

        version = self.version

        accounts = []
        for accounts_item_data in self.accounts:
            accounts_item = accounts_item_data.to_dict()
            accounts.append(accounts_item)

        locked_memory = self.locked_memory.to_dict()

        relay: Union[Unset, dict[str, Any]] = UNSET
        if not isinstance(self.relay, Unset):
            relay = self.relay.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "state": state,
                "version": version,
                "accounts": accounts,
                "lockedMemory": locked_memory,
            }
        )
        if relay is not UNSET:
            field_dict["relay"] = relay

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.account_status import AccountStatus
        from ..models.locked_memory import LockedMemory
        from ..models.relay_status import RelayStatus

        d = dict(src_dict)
        state = cast(Literal["ready"], d.pop("state"))
        if state != "ready":
            raise ValueError(f"state must match const 'ready', got '{state}'")

        version = d.pop("version")

        accounts = []
        _accounts = d.pop("accounts")
        for accounts_item_data in _accounts:
            accounts_item = AccountStatus.from_dict(accounts_item_data)

            accounts.append(accounts_item)

        locked_memory = LockedMemory.from_dict(d.pop("lockedMemory"))

        _relay = d.pop("relay", UNSET)
        relay: Union[Unset, RelayStatus]
        if isinstance(_relay, Unset):
            relay = UNSET
        else:
            relay = RelayStatus.from_dict(_relay)

        status_answer = cls(
            state=state,
            version=version,
            accounts=accounts,
            locked_memory=locked_memory,
            relay=relay,
        )

        return status_answer
