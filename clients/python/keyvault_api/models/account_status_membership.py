from enum import Enum


class AccountStatusMembership(str, Enum):
    DESTROYED = "destroyed"
    FOUNDING = "founding"
    JOINING = "joining"
    MEMBER = "member"
    REVOKED = "revoked"

    def __str__(self) -> str:
        return str(self.value)
