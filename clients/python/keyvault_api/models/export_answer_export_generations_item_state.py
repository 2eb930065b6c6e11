from enum import Enum


class ExportAnswerExportGenerationsItemState(str, Enum):
    ACTIVE = "active"
    DESTROYED = "destroyed"

    def __str__(self) -> str:
        return str(self.value)
