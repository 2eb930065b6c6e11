from enum import Enum


class DeviceStatus(str, Enum):
    PENDING = "pending"
    RECOVERY_KIT = "recovery-kit"
    REVOKED = "revoked"
    TRUSTED = "trusted"

    def __str__(self) -> str:
        return str(self.value)
