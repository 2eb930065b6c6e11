from collections.abc import Mapping
from typing import (
    Any,
    TypeVar,
    Union,
)

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="OpenRequestItemsItem")


@_attrs_define
class OpenRequestItemsItem:
    """
    Attributes:
        envelope (str): Standard alphabet, `=` padding.
        aad (Union[Unset, str]): Standard alphabet, `=` padding.
    """

    envelope: str
    aad: Union[Unset, str] = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        envelope = self.envelope

        aad = self.aad

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "envelope": envelope,
            }
        )
        if aad is not UNSET:
            field_dict["aad"] = aad

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        envelope = d.pop("envelope")

        aad = d.pop("aad", UNSET)

        open_request_items_item = cls(
            envelope=envelope,
            aad=aad,
        )

        open_request_items_item.additional_properties = d
        return open_request_items_item

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
