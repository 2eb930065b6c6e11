from collections.abc import Mapping
from typing import (
    Any,
    Literal,
    TypeVar,
    cast,
)

from attrs import define as _attrs_define

T = TypeVar("T", bound="ApprovedAnswer")


@_attrs_define
class ApprovedAnswer:
    """
    Attributes:
        state (Literal['ready']):
        device_id (str): 32 lowercase hex characters (a key ID or a device ID).
        device_name (str):
    """

    state: Literal["ready"]
    device_id: str
    device_name: str

    def to_dict(self) -> dict[str, Any]:
        state = self.state

        device_id = self.device_id

        device_name = self.device_name

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "state": state,
                "deviceId": device_id,
                "deviceName": device_name,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        state = cast(Literal["ready"], d.pop("state"))
        if state != "ready":
            raise ValueError(f"state must match const 'ready', got '{state}'")

        device_id = d.pop("deviceId")

        device_name = d.pop("deviceName")

        approved_answer = cls(
            state=state,
            device_id=device_id,
            device_name=device_name,
        )

        return approved_answer
