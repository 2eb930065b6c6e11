from enum import Enum


class ExportAnswerExportCircleLogItemKind(str, Enum):
    ANNOUNCE = "announce"
    APPROVE = "approve"
    DESTROY = "destroy"
    GENESIS = "genesis"
    PROMOTE = "promote"
    RECOVERY = "recovery"
    REVOKE = "revoke"

    def __str__(self) -> str:
        return str(self.value)
