from collections.abc import Mapping
from typing import (
    Any,
    TypeVar,
    Union,
)

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.rotate_request_promote import RotateRequestPromote
from ..types import UNSET, Unset

T = TypeVar("T", bound="RotateRequest")


@_attrs_define
class RotateRequest:
    """
    Attributes:
        promote (Union[Unset, RotateRequestPromote]):  Default: RotateRequestPromote.AFTER_ACKS.
    """

    promote: Union[Unset, RotateRequestPromote] = RotateRequestPromote.AFTER_ACKS
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        promote: Union[Unset, str] = UNSET
        if not isinstance(self.promote, Unset):
            promote = self.promote.value

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if promote is not UNSET:
            field_dict["promote"] = promote

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        _promote = d.pop("promote", UNSET)
        promote: Union[Unset, RotateRequestPromote]
        if isinstance(_promote, Unset):
            promote = UNSET
        else:
            promote = RotateRequestPromote(_promote)

        rotate_request = cls(
            promote=promote,
        )

        rotate_request.additional_properties = d
        return rotate_request

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
