from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="DeviceEvent")


@_attrs_define
class DeviceEvent:
    """`device-enrolled` and `device-revoked`.

    Attributes:
        device_id (str): 32 lowercase hex characters (a key ID or a device ID).
    """

    device_id: str

    def to_dict(self) -> dict[str, Any]:
        device_id = self.device_id

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "deviceId": device_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        device_id = d.pop("deviceId")

        device_event = cls(
            device_id=device_id,
        )

        return device_event
