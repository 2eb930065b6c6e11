from collections.abc import Mapping
from typing import (
    Any,
    Literal,
    TypeVar,
    cast,
)

from attrs import define as _attrs_define

T = TypeVar("T", bound="HealthAnswer")


@_attrs_define
class HealthAnswer:
    """
    Attributes:
        state (Literal['ready']):
        version (str):
    """

    state: Literal["ready"]
    version: str

    def to_dict(self) -> dict[str, Any]:
        state = self.state

        version = self.version

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "state": state,
                "version": version,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        state = cast(Literal["ready"], d.pop("state"))
        if state != "ready":
            raise ValueError(f"state must match const 'ready', got '{state}'")

        version = d.pop("version")

        health_answer = cls(
            state=state,
            version=version,
        )

        return health_answer
