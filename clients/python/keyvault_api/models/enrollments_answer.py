from collections.abc import Mapping
from typing import (
    TYPE_CHECKING,
    Any,
    Literal,
    TypeVar,
    cast,
)

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.enrollments_answer_enrollments_item import (
        EnrollmentsAnswerEnrollmentsItem,
    )


T = TypeVar("T", bound="EnrollmentsAnswer")


@_attrs_define
class EnrollmentsAnswer:
    """
    Attributes:
        state (Literal['ready']):
        enrollments (list['EnrollmentsAnswerEnrollmentsItem']):
    """

    state: Literal["ready"]
    enrollments: list["EnrollmentsAnswerEnrollmentsItem"]

    def to_dict(self) -> dict[str, Any]:
        state = self.state

        enrollments = []
        for enrollments_item_data in self.enrollments:
            enrollments_item = enrollments_item_data.to_dict()
            enrollments.append(enrollments_item)

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "state": state,
                "enrollments": enrollments,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.enrollments_answer_enrollments_item import (
            EnrollmentsAnswerEnrollmentsItem,
        )

        d = dict(src_dict)
        state = cast(Literal["ready"], d.pop("state"))
        if state != "ready":
            raise ValueError(f"state must match const 'ready', got '{state}'")

        enrollments = []
        _enrollments = d.pop("enrollments")
        for enrollments_item_data in _enrollments:
            enrollments_item = EnrollmentsAnswerEnrollmentsItem.from_dict(
                enrollments_item_data
            )

            enrollments.append(enrollments_item)

        enrollments_answer = cls(
            state=state,
            enrollments=enrollments,
        )

        return enrollments_answer
