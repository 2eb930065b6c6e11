from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="EmptyEvent")


@_attrs_define
class EmptyEvent:
    """`locked`, `unlocked`, `destroyed`, `resync`: `{}`."""

    def to_dict(self) -> dict[str, Any]:
        field_dict: dict[str, Any] = {}

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        empty_event = cls()

        return empty_event
