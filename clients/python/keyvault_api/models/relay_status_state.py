from enum import Enum


class RelayStatusState(str, Enum):
    CONNECTING = "connecting"
    REACHABLE = "reachable"
    UNREACHABLE = "unreachable"

    def __str__(self) -> str:
        return str(self.value)
