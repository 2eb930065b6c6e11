from collections.abc import Mapping
from typing import (
    Any,
    TypeVar,
    Union,
)

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="ImportRequest")


@_attrs_define
class ImportRequest:
    """
    Attributes:
        kit (str): Standard alphabet, `=` padding.
        kit_passphrase (str): 1 to 1024 bytes of UTF-8, as sent (no normalisation).
        passphrase (str): 1 to 1024 bytes of UTF-8, as sent (no normalisation).
        device_name (Union[Unset, str]): 1 to 128 bytes of printable text.
    """

    kit: str
    kit_passphrase: str
    passphrase: str
    device_name: Union[Unset, str] = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        kit = self.kit

        kit_passphrase = self.kit_passphrase

        passphrase = self.passphrase

        device_name = self.device_name

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "kit": kit,
                "kitPassphrase": kit_passphrase,
                "passphrase": passphrase,
            }
        )
        if device_name is not UNSET:
            field_dict["deviceName"] = device_name

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        kit = d.pop("kit")

        kit_passphrase = d.pop("kitPassphrase")

        passphrase = d.pop("passphrase")

        device_name = d.pop("deviceName", UNSET)

        import_request = cls(
            kit=kit,
            kit_passphrase=kit_passphrase,
            passphrase=passphrase,
            device_name=device_name,
        )

        import_request.additional_properties = d
        return import_request

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
