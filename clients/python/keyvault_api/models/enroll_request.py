from collections.abc import Mapping
from typing import (
    Any,
    TypeVar,
    Union,
)

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="EnrollRequest")


@_attrs_define
class EnrollRequest:
    """
    Attributes:
        passphrase (str): 1 to 1024 bytes of UTF-8, as sent (no normalisation).
        device_name (str): 1 to 128 bytes of printable text.
        identity_token (Union[Unset, str]):
    """

    passphrase: str
    device_name: str
    identity_token: Union[Unset, str] = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        passphrase = self.passphrase

        device_name = self.device_name

        identity_token = self.identity_token

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "passphrase": passphrase,
                "deviceName": device_name,
            }
        )
        if identity_token is not UNSET:
            field_dict["identityToken"] = identity_token

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        passphrase = d.pop("passphrase")

        device_name = d.pop("deviceName")

        identity_token = d.pop("identityToken", UNSET)

        enroll_request = cls(
            passphrase=passphrase,
            device_name=device_name,
            identity_token=identity_token,
        )

        enroll_request.additional_properties = d
        return enroll_request

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
