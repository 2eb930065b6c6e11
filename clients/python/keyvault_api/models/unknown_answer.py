from collections.abc import Mapping
from typing import (
    Any,
    Literal,
    TypeVar,
    cast,
)

from attrs import define as _attrs_define

T = TypeVar("T", bound="UnknownAnswer")


@_attrs_define
class UnknownAnswer:
    """
    Attributes:
        state (Literal['unknown']):
        error (str):
    """

    state: Literal["unknown"]
    error: str

    def to_dict(self) -> dict[str, Any]:
        state = self.state

        error = self.error

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "state": state,
                "error": error,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        state = cast(Literal["unknown"], d.pop("state"))
        if state != "unknown":
            raise ValueError(f"state must match const 'unknown', got '{state}'")

        error = d.pop("error")

        unknown_answer = cls(
            state=state,
            error=error,
        )

        return unknown_answer
