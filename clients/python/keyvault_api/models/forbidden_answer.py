from collections.abc import Mapping
from typing import (
    Any,
    Literal,
    TypeVar,
    cast,
)

from attrs import define as _attrs_define

T = TypeVar("T", bound="ForbiddenAnswer")


@_attrs_define
class ForbiddenAnswer:
    """
    Attributes:
        state (Literal['forbidden']):
        error (str):
    """

    state: Literal["forbidden"]
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
        state = cast(Literal["forbidden"], d.pop("state"))
        if state != "forbidden":
            raise ValueError(f"state must match const 'forbidden', got '{state}'")

        error = d.pop("error")

        forbidden_answer = cls(
            state=state,
            error=error,
        )

        return forbidden_answer
