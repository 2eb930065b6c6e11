from collections.abc import Mapping
from typing import (
    Any,
    TypeVar,
    Union,
)

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="FoundCircleBody")


@_attrs_define
class FoundCircleBody:
    """
    Attributes:
        identity_token (Union[Unset, str]):
    """

    identity_token: Union[Unset, str] = UNSET

    def to_dict(self) -> dict[str, Any]:
        identity_token = self.identity_token

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if identity_token is not UNSET:
            field_dict["identityToken"] = identity_token

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        identity_token = d.pop("identityToken", UNSET)

        found_circle_body = cls(
            identity_token=identity_token,
        )

        return found_circle_body
