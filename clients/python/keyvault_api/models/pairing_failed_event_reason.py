from enum import Enum


class PairingFailedEventReason(str, Enum):
    CODE_MISMATCH = "code-mismatch"
    NO_ANSWER = "no-answer"
    OTHER_CIRCLE = "other-circle"

    def __str__(self) -> str:
        return str(self.value)
