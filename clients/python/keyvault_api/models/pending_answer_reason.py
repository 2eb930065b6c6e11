from enum import Enum


class PendingAnswerReason(str, Enum):
    AWAITING_APPROVAL = "awaiting-approval"
    AWAITING_DELIVERY = "awaiting-delivery"
    AWAITING_RELAY = "awaiting-relay"
    CODE_MISMATCH = "code-mismatch"

    def __str__(self) -> str:
        return str(self.value)
