from collections.abc import Mapping
from typing import (
    Any,
    TypeVar,
    Union,
)

from attrs import define as _attrs_define

from ..models.export_answer_export_circle_log_item_kind import (
    ExportAnswerExportCircleLogItemKind,
)
from ..types import UNSET, Unset

T = TypeVar("T", bound="ExportAnswerExportCircleLogItem")


@_attrs_define
class ExportAnswerExportCircleLogItem:
    """
    Attributes:
        seq (int): The entry's place in the log, from 0 (the genesis).
        kind (ExportAnswerExportCircleLogItemKind):
        signer (str): 32 lowercase hex characters (a key ID or a device ID).
        created_at (str): RFC 3339, UTC, milliseconds.
        hash_ (str):
        subject (Union[Unset, str]): A device ID (genesis, approve, recovery, revoke), `generation N` (announce,
            promote); absent for destroy.
    """

    seq: int
    kind: ExportAnswerExportCircleLogItemKind
    signer: str
    created_at: str
    hash_: str
    subject: Union[Unset, str] = UNSET

    def to_dict(self) -> dict[str, Any]:
        seq = self.seq

        kind = self.kind.value

        signer = self.signer

        created_at = self.created_at

        hash_ = self.hash_

        subject = self.subject

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "seq": seq,
                "kind": kind,
                "signer": signer,
                "createdAt": created_at,
                "hash": hash_,
            }
        )
        if subject is not UNSET:
            field_dict["subject"] = subject

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        seq = d.pop("seq")

        kind = ExportAnswerExportCircleLogItemKind(d.pop("kind"))

        signer = d.pop("signer")

        created_at = d.pop("createdAt")

        hash_ = d.pop("hash")

        subject = d.pop("subject", UNSET)

        export_answer_export_circle_log_item = cls(
            seq=seq,
            kind=kind,
            signer=signer,
            created_at=created_at,
            hash_=hash_,
            subject=subject,
        )

        return export_answer_export_circle_log_item
