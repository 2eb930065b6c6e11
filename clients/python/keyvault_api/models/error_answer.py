from collections.abc import Mapping
from typing import (
    Any,
    Literal,
    TypeVar,
    cast,
)

from attrs import define as _attrs_define

T = TypeVar("T", bound="ErrorAnswer")


@_attrs_define
class ErrorAnswer:
    """
    Attributes:
        state (Literal['error']):
        error (str):
    """

    state: Literal["error"]
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
        state = cast(Literal["error"], d.pop("state"))
        if state != "error":
            raise ValueError(f"state must match const 'error', got '{state}'")

        error = d.pop("error")

        error_answer = cls(
            state=state,
            error=error,
        )

        return error_answer
