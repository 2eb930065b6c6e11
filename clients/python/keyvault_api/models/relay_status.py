from collections.abc import Mapping
from typing import (
    TYPE_CHECKING,
    Any,
    TypeVar,
    Union,
)

from attrs import define as _attrs_define

from ..models.relay_status_state import RelayStatusState
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.relay_behind import RelayBehind
    from ..models.relay_conflict import RelayConflict


T = TypeVar("T", bound="RelayStatus")


@_attrs_define
class RelayStatus:
    """
    Attributes:
        state (RelayStatusState):
        queued (int):
        since (Union[Unset, str]): RFC 3339, UTC, milliseconds.
        problem (Union[Unset, str]):
        behind (Union[Unset, list['RelayBehind']]): Absent when empty.
        conflicts (Union[Unset, list['RelayConflict']]): Accounts on their own here whose ID the relay holds another
            device's circle for. Absent when empty.
    """

    state: RelayStatusState
    queued: int
    since: Union[Unset, str] = UNSET
    problem: Union[Unset, str] = UNSET
    behind: Union[Unset, list["RelayBehind"]] = UNSET
    conflicts: Union[Unset, list["RelayConflict"]] = UNSET

    def to_dict(self) -> dict[str, Any]:
        state = self.state.value

        queued = self.queued

        since = self.since

        problem = self.problem

        behind: Union[Unset, list[dict[str, Any]]] = UNSET
        if not isinstance(self.behind, Unset):
            behind = []
            for behind_item_data in self.behind:
                behind_item = behind_item_data.to_dict()
                behind.append(behind_item)

        conflicts: Union[Unset, list[dict[str, Any]]] = UNSET
        if not isinstance(self.conflicts, Unset):
            conflicts = []
            for conflicts_item_data in self.conflicts:
                conflicts_item = conflicts_item_data.to_dict()
                conflicts.append(conflicts_item)

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "state": state,
                "queued": queued,
            }
        )
        if since is not UNSET:
            field_dict["since"] = since
        if problem is not UNSET:
            field_dict["problem"] = problem
        if behind is not UNSET:
            field_dict["behind"] = behind
        if conflicts is not UNSET:
            field_dict["conflicts"] = conflicts

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.relay_behind import RelayBehind
        from ..models.relay_conflict import RelayConflict

        d = dict(src_dict)
        state = RelayStatusState(d.pop("state"))

        queued = d.pop("queued")

        since = d.pop("since", UNSET)

        problem = d.pop("problem", UNSET)

        behind = []
        _behind = d.pop("behind", UNSET)
        for behind_item_data in _behind or []:
            behind_item = RelayBehind.from_dict(behind_item_data)

            behind.append(behind_item)

        conflicts = []
        _conflicts = d.pop("conflicts", UNSET)
        for conflicts_item_data in _conflicts or []:
            conflicts_item = RelayConflict.from_dict(conflicts_item_data)

            conflicts.append(conflicts_item)

        relay_status = cls(
            state=state,
            queued=queued,
            since=since,
            problem=problem,
            behind=behind,
            conflicts=conflicts,
        )

        return relay_status
