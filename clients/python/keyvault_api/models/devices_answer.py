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
    from ..models.device import Device


T = TypeVar("T", bound="DevicesAnswer")


@_attrs_define
class DevicesAnswer:
    """
    Attributes:
        state (Literal['ready']):
        devices (list['Device']):
    """

    state: Literal["ready"]
    devices: list["Device"]

    def to_dict(self) -> dict[str, Any]:
        state = self.state

        devices = []
        for devices_item_data in self.devices:
            devices_item = devices_item_data.to_dict()
            devices.append(devices_item)

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "state": state,
                "devices": devices,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.device import Device

        d = dict(src_dict)
        state = cast(Literal["ready"], d.pop("state"))
        if state != "ready":
            raise ValueError(f"state must match const 'ready', got '{state}'")

        devices = []
        _devices = d.pop("devices")
        for devices_item_data in _devices:
            devices_item = Device.from_dict(devices_item_data)

            devices.append(devices_item)

        devices_answer = cls(
            state=state,
            devices=devices,
        )

        return devices_answer
