from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..models.account_status_accessibility import AccountStatusAccessibility
from ..models.account_status_membership import AccountStatusMembership

T = TypeVar("T", bound="AccountStatus")


@_attrs_define
class AccountStatus:
    """
    Attributes:
        account (str):
        device_id (str): 32 lowercase hex characters (a key ID or a device ID).
        locked (bool):
        accessibility (AccountStatusAccessibility):
        current_generation (int): The generation `keys/current` answers with; 0 while the account has no current key (a
            device still joining).
        generations (int):
        membership (AccountStatusMembership): This device's place in the account's circle: `founding` (its circle is
            this device's and not on the relay yet), `joining` (asked to join, not approved yet), `member`, `revoked`
            (removed: it keeps the keys it held and gets no more) or `destroyed`.
    """

    account: str
    device_id: str
    locked: bool
    accessibility: AccountStatusAccessibility
    current_generation: int
    generations: int
    membership: AccountStatusMembership

    def to_dict(self) -> dict[str, Any]:
        account = self.account

        device_id = self.device_id

        locked = self.locked

        accessibility = self.accessibility.value

        current_generation = self.current_generation

        generations = self.generations

        membership = self.membership.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "account": account,
                "deviceId": device_id,
                "locked": locked,
                "accessibility": accessibility,
                "currentGeneration": current_generation,
                "generations": generations,
                "membership": membership,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        account = d.pop("account")

        device_id = d.pop("deviceId")

        locked = d.pop("locked")

        accessibility = AccountStatusAccessibility(d.pop("accessibility"))

        current_generation = d.pop("currentGeneration")

        generations = d.pop("generations")

        membership = AccountStatusMembership(d.pop("membership"))

        account_status = cls(
            account=account,
            device_id=device_id,
            locked=locked,
            accessibility=accessibility,
            current_generation=current_generation,
            generations=generations,
            membership=membership,
        )

        return account_status
