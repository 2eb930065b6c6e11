from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..models.export_answer_export_generations_item_state import (
    ExportAnswerExportGenerationsItemState,
)

T = TypeVar("T", bound="ExportAnswerExportGenerationsItem")


@_attrs_define
class ExportAnswerExportGenerationsItem:
    """
    Attributes:
        generation (int):
        key_id (str): 32 lowercase hex characters (a key ID or a device ID).
        created_at (str): RFC 3339, UTC, milliseconds.
        state (ExportAnswerExportGenerationsItemState):
        current (bool):
        held_here (bool):
    """

    generation: int
    key_id: str
    created_at: str
    state: ExportAnswerExportGenerationsItemState
    current: bool
    held_here: bool

    def to_dict(self) -> dict[str, Any]:
        generation = self.generation

        key_id = self.key_id

        created_at = self.created_at

        state = self.state.value

        current = self.current

        held_here = self.held_here

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "generation": generation,
                "keyId": key_id,
                "createdAt": created_at,
                "state": state,
                "current": current,
                "heldHere": held_here,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        generation = d.pop("generation")

        key_id = d.pop("keyId")

        created_at = d.pop("createdAt")

        state = ExportAnswerExportGenerationsItemState(d.pop("state"))

        current = d.pop("current")

        held_here = d.pop("heldHere")

        export_answer_export_generations_item = cls(
            generation=generation,
            key_id=key_id,
            created_at=created_at,
            state=state,
            current=current,
            held_here=held_here,
        )

        return export_answer_export_generations_item
