from collections.abc import Mapping
from typing import (
    Any,
    Literal,
    TypeVar,
    cast,
)

from attrs import define as _attrs_define

T = TypeVar("T", bound="DestroyedAnswer")


@_attrs_define
class DestroyedAnswer:
    """
    Attributes:
        state (Literal['destroyed']):
        error (str):
    """

    state: Literal["destroyed"]
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
        state = cast(Literal["destroyed"], d.pop("state"))
        if state != "destroyed":
            raise ValueError(f"state must match const 'destroyed', got '{state}'")

        error = d.pop("error")

        destroyed_answer = cls(
            state=state,
            error=error,
        )

        return destroyed_answer
