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

T = TypeVar("T", bound="KitAnswer")


@_attrs_define
class KitAnswer:
    """
    Attributes:
        state (Literal['ready']):
        account (str):
        kit (str): Standard alphabet, `=` padding.
        member_device_id (Union[Unset, str]): 32 lowercase hex characters (a key ID or a device ID).
    """

    state: Literal["ready"]
    account: str
    kit: str
    member_device_id: Union[Unset, str] = UNSET

    def to_dict(self) -> dict[str, Any]:
        state = self.state

        account = self.account

        kit = self.kit

        member_device_id = self.member_device_id

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "state": state,
                "account": account,
                "kit": kit,
            }
        )
        if member_device_id is not UNSET:
            field_dict["memberDeviceId"] = member_device_id

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        state = cast(Literal["ready"], d.pop("state"))
        if state != "ready":
            raise ValueError(f"state must match const 'ready', got '{state}'")

        account = d.pop("account")

        kit = d.pop("kit")

        member_device_id = d.pop("memberDeviceId", UNSET)

        kit_answer = cls(
            state=state,
            account=account,
            kit=kit,
            member_device_id=member_device_id,
        )

        return kit_answer
