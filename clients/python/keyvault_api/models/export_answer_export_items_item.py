from collections.abc import Mapping
from typing import (
    Any,
    TypeVar,
    Union,
)

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="ExportAnswerExportItemsItem")


@_attrs_define
class ExportAnswerExportItemsItem:
    """
    Attributes:
        item_class (str):
        service (str):
        account (str):
        access_group (str):
        label (str):
        kind (str):
        accessibility (str):
        generation (int):
        synchronizable (bool):
        creation_date (str): RFC 3339, UTC, milliseconds.
        modification_date (str): RFC 3339, UTC, milliseconds.
        key_id (Union[Unset, str]): 32 lowercase hex characters (a key ID or a device ID).
    """

    item_class: str
    service: str
    account: str
    access_group: str
    label: str
    kind: str
    accessibility: str
    generation: int
    synchronizable: bool
    creation_date: str
    modification_date: str
    key_id: Union[Unset, str] = UNSET

    def to_dict(self) -> dict[str, Any]:
        item_class = self.item_class

        service = self.service

        account = self.account

        access_group = self.access_group

        label = self.label

        kind = self.kind

        accessibility = self.accessibility

        generation = self.generation

        synchronizable = self.synchronizable

        creation_date = self.creation_date

        modification_date = self.modification_date

        key_id = self.key_id

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "itemClass": item_class,
                "service": service,
                "account": account,
                "accessGroup": access_group,
                "label": label,
                "kind": kind,
                "accessibility": accessibility,
                "generation": generation,
                "synchronizable": synchronizable,
                "creationDate": creation_date,
                "modificationDate": modification_date,
            }
        )
        if key_id is not UNSET:
            field_dict["keyId"] = key_id

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        item_class = d.pop("itemClass")

        service = d.pop("service")

        account = d.pop("account")

        access_group = d.pop("accessGroup")

        label = d.pop("label")

        kind = d.pop("kind")

        accessibility = d.pop("accessibility")

        generation = d.pop("generation")

        synchronizable = d.pop("synchronizable")

        creation_date = d.pop("creationDate")

        modification_date = d.pop("modificationDate")

        key_id = d.pop("keyId", UNSET)

        export_answer_export_items_item = cls(
            item_class=item_class,
            service=service,
            account=account,
            access_group=access_group,
            label=label,
            kind=kind,
            accessibility=accessibility,
            generation=generation,
            synchronizable=synchronizable,
            creation_date=creation_date,
            modification_date=modification_date,
            key_id=key_id,
        )

        return export_answer_export_items_item
