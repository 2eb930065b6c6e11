from collections.abc import Mapping
from typing import (
    Any,
    TypeVar,
    Union,
)

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.create_account_request_accessibility import (
    CreateAccountRequestAccessibility,
)
from ..types import UNSET, Unset

T = TypeVar("T", bound="CreateAccountRequest")


@_attrs_define
class CreateAccountRequest:
    """
    Attributes:
        user (str):
        passphrase (str): 1 to 1024 bytes of UTF-8, as sent (no normalisation).
        accessibility (Union[Unset, CreateAccountRequestAccessibility]):  Default:
            CreateAccountRequestAccessibility.WHENUNLOCKED.
        device_name (Union[Unset, str]): 1 to 128 bytes of printable text.
        identity_token (Union[Unset, str]): The OpenID Connect ID token of the person's sign-in, with a relay service.
    """

    user: str
    passphrase: str
    accessibility: Union[Unset, CreateAccountRequestAccessibility] = (
        CreateAccountRequestAccessibility.WHENUNLOCKED
    )
    device_name: Union[Unset, str] = UNSET
    identity_token: Union[Unset, str] = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        user = self.user

        passphrase = self.passphrase

        accessibility: Union[Unset, str] = UNSET
        if not isinstance(self.accessibility, Unset):
            accessibility = self.accessibility.value

        device_name = self.device_name

        identity_token = self.identity_token

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "user": user,
                "passphrase": passphrase,
            }
        )
        if accessibility is not UNSET:
            field_dict["accessibility"] = accessibility
        if device_name is not UNSET:
            field_dict["deviceName"] = device_name
        if identity_token is not UNSET:
            field_dict["identityToken"] = identity_token

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        user = d.pop("user")

        passphrase = d.pop("passphrase")

        _accessibility = d.pop("accessibility", UNSET)
        accessibility: Union[Unset, CreateAccountRequestAccessibility]
        if isinstance(_accessibility, Unset):
            accessibility = UNSET
        else:
            accessibility = CreateAccountRequestAccessibility(_accessibility)

        device_name = d.pop("deviceName", UNSET)

        identity_token = d.pop("identityToken", UNSET)

        create_account_request = cls(
            user=user,
            passphrase=passphrase,
            accessibility=accessibility,
            device_name=device_name,
            identity_token=identity_token,
        )

        create_account_request.additional_properties = d
        return create_account_request

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
