from collections.abc import Mapping
from typing import (
    Any,
    TypeVar,
    cast,
)

from attrs import define as _attrs_define

T = TypeVar("T", bound="RelayBehind")


@_attrs_define
class RelayBehind:
    """
    Attributes:
        account (str):
        missing_entries (list[int]):
        since (str): RFC 3339, UTC, milliseconds.
        republished (bool):
    """

    account: str
    missing_entries: list[int]
    since: str
    republished: bool

    def to_dict(self) -> dict[str, Any]:
        account = self.account

        missing_entries = self.missing_entries

        since = self.since

        republished = self.republished

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "account": account,
                "missingEntries": missing_entries,
                "since": since,
                "republished": republished,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        account = d.pop("account")

        missing_entries = cast(list[int], d.pop("missingEntries"))

        since = d.pop("since")

        republished = d.pop("republished")

        relay_behind = cls(
            account=account,
            missing_entries=missing_entries,
            since=since,
            republished=republished,
        )

        return relay_behind
