from enum import Enum


class ExportAnswerExportAccessibility(str, Enum):
    AFTERFIRSTUNLOCK = "afterFirstUnlock"
    WHENUNLOCKED = "whenUnlocked"

    def __str__(self) -> str:
        return str(self.value)
