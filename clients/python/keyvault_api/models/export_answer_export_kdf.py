from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="ExportAnswerExportKdf")


@_attrs_define
class ExportAnswerExportKdf:
    """The Argon2id cost of this account's passphrase.

    Attributes:
        passes (int):
        memory_bytes (int):
    """

    passes: int
    memory_bytes: int

    def to_dict(self) -> dict[str, Any]:
        passes = self.passes

        memory_bytes = self.memory_bytes

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "passes": passes,
                "memoryBytes": memory_bytes,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        passes = d.pop("passes")

        memory_bytes = d.pop("memoryBytes")

        export_answer_export_kdf = cls(
            passes=passes,
            memory_bytes=memory_bytes,
        )

        return export_answer_export_kdf
