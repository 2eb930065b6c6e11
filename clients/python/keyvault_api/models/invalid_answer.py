from collections.abc import Mapping
from typing import (
    Any,
    Literal,
    TypeVar,
    cast,
)

from attrs import define as _attrs_define

T = TypeVar("T", bound="InvalidAnswer")


@_attrs_define
class InvalidAnswer:
    """
    Attributes:
        state (Literal['invalid']):
        error (str):
    """

    state: Literal["invalid"]
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
        state = cast(Literal["invalid"], d.pop("state"))
        if state != "invalid":
            raise ValueError(f"state must match const 'invalid', got '{state}'")

        error = d.pop("error")

        invalid_answer = cls(
            state=state,
            error=error,
        )

        return invalid_answer
