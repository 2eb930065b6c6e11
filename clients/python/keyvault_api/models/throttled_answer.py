from collections.abc import Mapping
from typing import (
    Any,
    Literal,
    TypeVar,
    cast,
)

from attrs import define as _attrs_define

T = TypeVar("T", bound="ThrottledAnswer")


@_attrs_define
class ThrottledAnswer:
    """No `retryAfter` field: the `Retry-After` header says how long.

    Attributes:
        state (Literal['throttled']):
        error (str):
    """

    state: Literal["throttled"]
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
        state = cast(Literal["throttled"], d.pop("state"))
        if state != "throttled":
            raise ValueError(f"state must match const 'throttled', got '{state}'")

        error = d.pop("error")

        throttled_answer = cls(
            state=state,
            error=error,
        )

        return throttled_answer
