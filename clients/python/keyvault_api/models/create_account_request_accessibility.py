from enum import Enum


class CreateAccountRequestAccessibility(str, Enum):
    AFTERFIRSTUNLOCK = "afterFirstUnlock"
    WHENUNLOCKED = "whenUnlocked"

    def __str__(self) -> str:
        return str(self.value)
