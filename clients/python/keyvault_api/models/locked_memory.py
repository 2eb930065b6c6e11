from collections.abc import Mapping
from typing import (
    Any,
    TypeVar,
    Union,
    cast,
)

from attrs import define as _attrs_define

T = TypeVar("T", bound="LockedMemory")


@_attrs_define
class LockedMemory:
    """
    Attributes:
        secrets (int):
        in_use (int):
        reserved (int):
        locked (int):
        swappable (int):
        limit (Union[None, int]): RLIMIT_MEMLOCK; null when no limit applies.
    """

    secrets: int
    in_use: int
    reserved: int
    locked: int
    swappable: int
    limit: Union[None, int]

    def to_dict(self) -> dict[str, Any]:
        secrets = self.secrets

        in_use = self.in_use

        reserved = self.reserved

        locked = self.locked

        swappable = self.swappable

        limit: Union[None, int]
        limit = self.limit

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "secrets": secrets,
                "inUse": in_use,
                "reserved": reserved,
                "locked": locked,
                "swappable": swappable,
                "limit": limit,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        secrets = d.pop("secrets")

        in_use = d.pop("inUse")

        reserved = d.pop("reserved")

        locked = d.pop("locked")

        swappable = d.pop("swappable")

        def _parse_limit(data: object) -> Union[None, int]:
            if data is None:
                return data
            return cast(Union[None, int], data)

        limit = _parse_limit(d.pop("limit"))

        locked_memory = cls(
            secrets=secrets,
            in_use=in_use,
            reserved=reserved,
            locked=locked,
            swappable=swappable,
            limit=limit,
        )

        return locked_memory
