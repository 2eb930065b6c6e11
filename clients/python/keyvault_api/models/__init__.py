"""Contains all the data models used in inputs/outputs"""

from .account_answer import AccountAnswer
from .account_status import AccountStatus
from .account_status_accessibility import AccountStatusAccessibility
from .account_status_membership import AccountStatusMembership
from .approve_request import ApproveRequest
from .approved_answer import ApprovedAnswer
from .change_passphrase_request import ChangePassphraseRequest
from .create_account_request import CreateAccountRequest
from .create_account_request_accessibility import CreateAccountRequestAccessibility
from .damaged_answer import DamagedAnswer
from .delete_account_everywhere import DeleteAccountEverywhere
from .deleted_answer import DeletedAnswer
from .denied_answer import DeniedAnswer
from .destroyed_answer import DestroyedAnswer
from .device import Device
from .device_acknowledged import DeviceAcknowledged
from .device_event import DeviceEvent
from .device_status import DeviceStatus
from .devices_answer import DevicesAnswer
from .dismissed_answer import DismissedAnswer
from .empty_event import EmptyEvent
from .enroll_pending_answer import EnrollPendingAnswer
from .enroll_request import EnrollRequest
from .enrollments_answer import EnrollmentsAnswer
from .enrollments_answer_enrollments_item import EnrollmentsAnswerEnrollmentsItem
from .enrollments_answer_enrollments_item_pairing_version import (
    EnrollmentsAnswerEnrollmentsItemPairingVersion,
)
from .error_answer import ErrorAnswer
from .export_answer import ExportAnswer
from .export_answer_export import ExportAnswerExport
from .export_answer_export_accessibility import ExportAnswerExportAccessibility
from .export_answer_export_circle_log_item import ExportAnswerExportCircleLogItem
from .export_answer_export_circle_log_item_kind import (
    ExportAnswerExportCircleLogItemKind,
)
from .export_answer_export_generations_item import ExportAnswerExportGenerationsItem
from .export_answer_export_generations_item_state import (
    ExportAnswerExportGenerationsItemState,
)
from .export_answer_export_items_item import ExportAnswerExportItemsItem
from .export_answer_export_kdf import ExportAnswerExportKdf
from .forbidden_answer import ForbiddenAnswer
from .found_circle_body import FoundCircleBody
from .generation_event import GenerationEvent
from .health_answer import HealthAnswer
from .identity_nonce_answer import IdentityNonceAnswer
from .import_answer import ImportAnswer
from .import_request import ImportRequest
from .invalid_answer import InvalidAnswer
from .key_answer import KeyAnswer
from .kit_answer import KitAnswer
from .locked_answer import LockedAnswer
from .locked_memory import LockedMemory
from .open_request import OpenRequest
from .open_request_items_item import OpenRequestItemsItem
from .opened_answer import OpenedAnswer
from .pairing_failed_event import PairingFailedEvent
from .pairing_failed_event_reason import PairingFailedEventReason
from .passphrase_request import PassphraseRequest
from .pending_answer import PendingAnswer
from .pending_answer_reason import PendingAnswerReason
from .recovery_kit_request import RecoveryKitRequest
from .relay_behind import RelayBehind
from .relay_conflict import RelayConflict
from .relay_status import RelayStatus
from .relay_status_state import RelayStatusState
from .revoked_answer import RevokedAnswer
from .revoked_device_answer import RevokedDeviceAnswer
from .rotate_request import RotateRequest
from .rotate_request_promote import RotateRequestPromote
from .rotated_answer import RotatedAnswer
from .seal_request import SealRequest
from .seal_request_items_item import SealRequestItemsItem
from .sealed_answer import SealedAnswer
from .server_answer import ServerAnswer
from .server_answer_connections import ServerAnswerConnections
from .server_answer_held import ServerAnswerHeld
from .server_answer_limits import ServerAnswerLimits
from .status_answer import StatusAnswer
from .throttled_answer import ThrottledAnswer
from .unknown_answer import UnknownAnswer

__all__ = (
    "AccountAnswer",
    "AccountStatus",
    "AccountStatusAccessibility",
    "AccountStatusMembership",
    "ApprovedAnswer",
    "ApproveRequest",
    "ChangePassphraseRequest",
    "CreateAccountRequest",
    "CreateAccountRequestAccessibility",
    "DamagedAnswer",
    "DeleteAccountEverywhere",
    "DeletedAnswer",
    "DeniedAnswer",
    "DestroyedAnswer",
    "Device",
    "DeviceAcknowledged",
    "DeviceEvent",
    "DevicesAnswer",
    "DeviceStatus",
    "DismissedAnswer",
    "EmptyEvent",
    "EnrollmentsAnswer",
    "EnrollmentsAnswerEnrollmentsItem",
    "EnrollmentsAnswerEnrollmentsItemPairingVersion",
    "EnrollPendingAnswer",
    "EnrollRequest",
    "ErrorAnswer",
    "ExportAnswer",
    "ExportAnswerExport",
    "ExportAnswerExportAccessibility",
    "ExportAnswerExportCircleLogItem",
    "ExportAnswerExportCircleLogItemKind",
    "ExportAnswerExportGenerationsItem",
    "ExportAnswerExportGenerationsItemState",
    "ExportAnswerExportItemsItem",
    "ExportAnswerExportKdf",
    "ForbiddenAnswer",
    "FoundCircleBody",
    "GenerationEvent",
    "HealthAnswer",
    "IdentityNonceAnswer",
    "ImportAnswer",
    "ImportRequest",
    "InvalidAnswer",
    "KeyAnswer",
    "KitAnswer",
    "LockedAnswer",
    "LockedMemory",
    "OpenedAnswer",
    "OpenRequest",
    "OpenRequestItemsItem",
    "PairingFailedEvent",
    "PairingFailedEventReason",
    "PassphraseRequest",
    "PendingAnswer",
    "PendingAnswerReason",
    "RecoveryKitRequest",
    "RelayBehind",
    "RelayConflict",
    "RelayStatus",
    "RelayStatusState",
    "RevokedAnswer",
    "RevokedDeviceAnswer",
    "RotatedAnswer",
    "RotateRequest",
    "RotateRequestPromote",
    "SealedAnswer",
    "SealRequest",
    "SealRequestItemsItem",
    "ServerAnswer",
    "ServerAnswerConnections",
    "ServerAnswerHeld",
    "ServerAnswerLimits",
    "StatusAnswer",
    "ThrottledAnswer",
    "UnknownAnswer",
)
