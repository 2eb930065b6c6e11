from collections.abc import Mapping
from typing import (
    TYPE_CHECKING,
    Any,
    TypeVar,
)

from attrs import define as _attrs_define

from ..models.export_answer_export_accessibility import ExportAnswerExportAccessibility

if TYPE_CHECKING:
    from ..models.device import Device
    from ..models.export_answer_export_circle_log_item import (
        ExportAnswerExportCircleLogItem,
    )
    from ..models.export_answer_export_generations_item import (
        ExportAnswerExportGenerationsItem,
    )
    from ..models.export_answer_export_items_item import ExportAnswerExportItemsItem
    from ..models.export_answer_export_kdf import ExportAnswerExportKdf


T = TypeVar("T", bound="ExportAnswerExport")


@_attrs_define
class ExportAnswerExport:
    """
    Attributes:
        account (str):
        device_id (str): 32 lowercase hex characters (a key ID or a device ID).
        device_name (str):
        created_at (str): RFC 3339, UTC, milliseconds.
        accessibility (ExportAnswerExportAccessibility):
        kdf (ExportAnswerExportKdf): The Argon2id cost of this account's passphrase.
        items (list['ExportAnswerExportItemsItem']): The keychain attributes of what the vault stores (no key material).
        generations (list['ExportAnswerExportGenerationsItem']):
        devices (list['Device']):
        circle_log (list['ExportAnswerExportCircleLogItem']):
    """

    account: str
    device_id: str
    device_name: str
    created_at: str
    accessibility: ExportAnswerExportAccessibility
    kdf: "ExportAnswerExportKdf"
    items: list["ExportAnswerExportItemsItem"]
    generations: list["ExportAnswerExportGenerationsItem"]
    devices: list["Device"]
    circle_log: list["ExportAnswerExportCircleLogItem"]

    def to_dict(self) -> dict[str, Any]:
        account = self.account

        device_id = self.device_id

        device_name = self.device_name

        created_at = self.created_at

        accessibility = self.accessibility.value

        kdf = self.kdf.to_dict()

        items = []
        for items_item_data in self.items:
            items_item = items_item_data.to_dict()
            items.append(items_item)

        generations = []
        for generations_item_data in self.generations:
            generations_item = generations_item_data.to_dict()
            generations.append(generations_item)

        devices = []
        for devices_item_data in self.devices:
            devices_item = devices_item_data.to_dict()
            devices.append(devices_item)

        circle_log = []
        for circle_log_item_data in self.circle_log:
            circle_log_item = circle_log_item_data.to_dict()
            circle_log.append(circle_log_item)

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "account": account,
                "deviceId": device_id,
                "deviceName": device_name,
                "createdAt": created_at,
                "accessibility": accessibility,
                "kdf": kdf,
                "items": items,
                "generations": generations,
                "devices": devices,
                "circleLog": circle_log,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.device import Device
        from ..models.export_answer_export_circle_log_item import (
            ExportAnswerExportCircleLogItem,
        )
        from ..models.export_answer_export_generations_item import (
            ExportAnswerExportGenerationsItem,
        )
        from ..models.export_answer_export_items_item import ExportAnswerExportItemsItem
        from ..models.export_answer_export_kdf import ExportAnswerExportKdf

        d = dict(src_dict)
        account = d.pop("account")

        device_id = d.pop("deviceId")

        device_name = d.pop("deviceName")

        created_at = d.pop("createdAt")

        accessibility = ExportAnswerExportAccessibility(d.pop("accessibility"))

        kdf = ExportAnswerExportKdf.from_dict(d.pop("kdf"))

        items = []
        _items = d.pop("items")
        for items_item_data in _items:
            items_item = ExportAnswerExportItemsItem.from_dict(items_item_data)

            items.append(items_item)

        generations = []
        _generations = d.pop("generations")
        for generations_item_data in _generations:
            generations_item = ExportAnswerExportGenerationsItem.from_dict(
                generations_item_data
            )

            generations.append(generations_item)

        devices = []
        _devices = d.pop("devices")
        for devices_item_data in _devices:
            devices_item = Device.from_dict(devices_item_data)

            devices.append(devices_item)

        circle_log = []
        _circle_log = d.pop("circleLog")
        for circle_log_item_data in _circle_log:
            circle_log_item = ExportAnswerExportCircleLogItem.from_dict(
                circle_log_item_data
            )

            circle_log.append(circle_log_item)

        export_answer_export = cls(
            account=account,
            device_id=device_id,
            device_name=device_name,
            created_at=created_at,
            accessibility=accessibility,
            kdf=kdf,
            items=items,
            generations=generations,
            devices=devices,
            circle_log=circle_log,
        )

        return export_answer_export
