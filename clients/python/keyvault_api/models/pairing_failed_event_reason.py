from enum import Enum


class PairingFailedEventReason(str, Enum):
    ANSWERED_ELSEWHERE = "answered-elsewhere"
    CODE_MISMATCH = "code-mismatch"
    NO_ANSWER = "no-answer"
    OTHER_CIRCLE = "other-circle"

    def __str__(self) -> str:
        return str(self.value)
