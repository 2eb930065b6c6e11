from collections.abc import Mapping
from typing import (
    Any,
    TypeVar,
    Union,
)

from attrs import define as _attrs_define

from ..models.enrollments_answer_enrollments_item_pairing_version import (
    EnrollmentsAnswerEnrollmentsItemPairingVersion,
)
from ..types import UNSET, Unset

T = TypeVar("T", bound="EnrollmentsAnswerEnrollmentsItem")


@_attrs_define
class EnrollmentsAnswerEnrollmentsItem:
    """
    Attributes:
        device_id (str): 32 lowercase hex characters (a key ID or a device ID).
        device_name (str):
        requested_at (str): RFC 3339, UTC, milliseconds.
        pairing_version (EnrollmentsAnswerEnrollmentsItemPairingVersion):
        problem (Union[Unset, str]): With pairing version 1 only: what the person must do first.
    """

    device_id: str
    device_name: str
    requested_at: str
    pairing_version: EnrollmentsAnswerEnrollmentsItemPairingVersion
    problem: Union[Unset, str] = UNSET

    def to_dict(self) -> dict[str, Any]:
        device_id = self.device_id

        device_name = self.device_name

        requested_at = self.requested_at

        pairing_version = self.pairing_version.value

        problem = self.problem

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "deviceId": device_id,
                "deviceName": device_name,
                "requestedAt": requested_at,
                "pairingVersion": pairing_version,
            }
        )
        if problem is not UNSET:
            field_dict["problem"] = problem

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        device_id = d.pop("deviceId")

        device_name = d.pop("deviceName")

        requested_at = d.pop("requestedAt")

        pairing_version = EnrollmentsAnswerEnrollmentsItemPairingVersion(
            d.pop("pairingVersion")
        )

        problem = d.pop("problem", UNSET)

        enrollments_answer_enrollments_item = cls(
            device_id=device_id,
            device_name=device_name,
            requested_at=requested_at,
            pairing_version=pairing_version,
            problem=problem,
        )

        return enrollments_answer_enrollments_item
