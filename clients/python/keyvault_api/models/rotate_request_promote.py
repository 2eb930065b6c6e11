from enum import Enum


class RotateRequestPromote(str, Enum):
    AFTER_ACKS = "after-acks"
    NOW = "now"

    def __str__(self) -> str:
        return str(self.value)
