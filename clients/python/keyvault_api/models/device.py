from collections.abc import Mapping
from typing import (
    TYPE_CHECKING,
    Any,
    TypeVar,
    cast,
)

from attrs import define as _attrs_define

from ..models.device_status import DeviceStatus

if TYPE_CHECKING:
    from ..models.device_acknowledged import DeviceAcknowledged


T = TypeVar("T", bound="Device")


@_attrs_define
class Device:
    """
    Attributes:
        device_id (str): 32 lowercase hex characters (a key ID or a device ID).
        device_name (str):
        status (DeviceStatus): `recovery-kit`: a recovery kit's member (PROTOCOL.md, "Recovery"), shared every key,
            never a device.
        last_seen (str): RFC 3339, UTC, milliseconds.
        generations (list[int]): The generations the device has acknowledged.
        acknowledged (DeviceAcknowledged): For each key the device holds, by key ID, when it acknowledged it.
    """

    device_id: str
    device_name: str
    status: DeviceStatus
    last_seen: str
    generations: list[int]
    acknowledged: "DeviceAcknowledged"

    def to_dict(self) -> dict[str, Any]:
        device_id = self.device_id

        device_name = self.device_name

        status = self.status.value

        last_seen = self.last_seen

        generations = self.generations

        acknowledged = self.acknowledged.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "deviceId": device_id,
                "deviceName": device_name,
                "status": status,
                "lastSeen": last_seen,
                "generations": generations,
                "acknowledged": acknowledged,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.device_acknowledged import DeviceAcknowledged

        d = dict(src_dict)
        device_id = d.pop("deviceId")

        device_name = d.pop("deviceName")

        status = DeviceStatus(d.pop("status"))

        last_seen = d.pop("lastSeen")

        generations = cast(list[int], d.pop("generations"))

        acknowledged = DeviceAcknowledged.from_dict(d.pop("acknowledged"))

        device = cls(
            device_id=device_id,
            device_name=device_name,
            status=status,
            last_seen=last_seen,
            generations=generations,
            acknowledged=acknowledged,
        )

        return device
