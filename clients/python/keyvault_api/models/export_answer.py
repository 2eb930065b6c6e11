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
    from ..models.export_answer_export import ExportAnswerExport


T = TypeVar("T", bound="ExportAnswer")


@_attrs_define
class ExportAnswer:
    """
    Attributes:
        state (Literal['ready']):
        export (ExportAnswerExport):
    """

    state: Literal["ready"]
    export: "ExportAnswerExport"

    def to_dict(self) -> dict[str, Any]:
        state = self.state

        export = self.export.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "state": state,
                "export": export,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.export_answer_export import ExportAnswerExport

        d = dict(src_dict)
        state = cast(Literal["ready"], d.pop("state"))
        if state != "ready":
            raise ValueError(f"state must match const 'ready', got '{state}'")

        export = ExportAnswerExport.from_dict(d.pop("export"))

        export_answer = cls(
            state=state,
            export=export,
        )

        return export_answer
