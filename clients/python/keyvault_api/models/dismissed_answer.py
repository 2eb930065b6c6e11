from collections.abc import Mapping
from typing import (
    Any,
    Literal,
    TypeVar,
    cast,
)

from attrs import define as _attrs_define

T = TypeVar("T", bound="DismissedAnswer")


@_attrs_define
class DismissedAnswer:
    """
    Attributes:
        state (Literal['ready']):
        account (str):
        device_id (str): 32 lowercase hex characters (a key ID or a device ID).
        dismissed (Literal[True]):
    """

    state: Literal["ready"]
    account: str
    device_id: str
    dismissed: Literal[True]

    def to_dict(self) -> dict[str, Any]:
        state = self.state

        account = self.account

        device_id = self.device_id

        dismissed = self.dismissed

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "state": state,
                "account": account,
                "deviceId": device_id,
                "dismissed": dismissed,
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

        device_id = d.pop("deviceId")

        dismissed = cast(Literal[True], d.pop("dismissed"))
        if dismissed != True:
            raise ValueError(f"dismissed must match const True, got '{dismissed}'")

        dismissed_answer = cls(
            state=state,
            account=account,
            device_id=device_id,
            dismissed=dismissed,
        )

        return dismissed_answer
