from enum import Enum


class AccountStatusAccessibility(str, Enum):
    AFTERFIRSTUNLOCK = "afterFirstUnlock"
    WHENUNLOCKED = "whenUnlocked"

    def __str__(self) -> str:
        return str(self.value)
