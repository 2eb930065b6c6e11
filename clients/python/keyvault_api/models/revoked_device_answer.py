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

T = TypeVar("T", bound="RevokedDeviceAnswer")


@_attrs_define
class RevokedDeviceAnswer:
    """
    Attributes:
        state (Literal['ready']):
        device_id (str): 32 lowercase hex characters (a key ID or a device ID).
        rotated_to (Union[Unset, int]):
    """

    state: Literal["ready"]
    device_id: str
    rotated_to: Union[Unset, int] = UNSET

    def to_dict(self) -> dict[str, Any]:
        state = self.state

        device_id = self.device_id

        rotated_to = self.rotated_to

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "state": state,
                "deviceId": device_id,
            }
        )
        if rotated_to is not UNSET:
            field_dict["rotatedTo"] = rotated_to

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        state = cast(Literal["ready"], d.pop("state"))
        if state != "ready":
            raise ValueError(f"state must match const 'ready', got '{state}'")

        device_id = d.pop("deviceId")

        rotated_to = d.pop("rotatedTo", UNSET)

        revoked_device_answer = cls(
            state=state,
            device_id=device_id,
            rotated_to=rotated_to,
        )

        return revoked_device_answer
