from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="RelayConflict")


@_attrs_define
class RelayConflict:
    """
    Attributes:
        account (str):
        since (str): RFC 3339, UTC, milliseconds.
        note (str):
    """

    account: str
    since: str
    note: str

    def to_dict(self) -> dict[str, Any]:
        account = self.account

        since = self.since

        note = self.note

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "account": account,
                "since": since,
                "note": note,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        account = d.pop("account")

        since = d.pop("since")

        note = d.pop("note")

        relay_conflict = cls(
            account=account,
            since=since,
            note=note,
        )

        return relay_conflict
