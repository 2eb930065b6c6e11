import KeyVaultCrypto
/// Every domain-separation string keyvaultd uses, named once. A value here is
/// part of the on-disk format or the protocol: changing one is a format break.
package enum Labels {
    /// AAD prefix for a secret wrapped under the account's KEK (docs/FORMAT.md).
    package static let wrap = "keyvault/v1/wrap"
    /// Key IDs: BLAKE2b-128 of the key under this label.
    package static let keyID = "keyvault/v1/key-id"
    /// Device IDs: BLAKE2b-128 of a device's two public keys under this label.
    package static let deviceID = "keyvault/v1/device-id"
}

extension Labels {
    /// A new device's signed enrollment request.
    package static let enrollRequest = "keyvault/v1/enroll-request"
    /// The hash that names an enrollment request.
    package static let requestHash = "keyvault/v1/request-hash"
    /// The six-digit pairing code.
    package static let pairingCode = "keyvault/v1/pairing-code"
    /// A circle log entry's signed bytes.
    package static let logEntry = "keyvault/v1/log-entry"
    /// The hash that chains log entries.
    package static let logHash = "keyvault/v1/log-hash"
    /// A key share's signed payload (inside the sealed box).
    package static let share = "keyvault/v1/share"
    /// A device's signed acknowledgement of a share.
    package static let ack = "keyvault/v1/ack"
}

extension Labels {
    /// The new device's commitment to its pairing secret, in its request.
    package static let pairingCommit = "keyvault/v1/pairing-commit"
    /// A trusted device's challenge nonce for one request.
    package static let enrollChallenge = "keyvault/v1/enroll-challenge"
    /// The new device's reveal of its pairing secret.
    package static let enrollReveal = "keyvault/v1/enroll-reveal"
}

extension Labels {
    /// A recovery kit: every key generation of an account under a kit passphrase.
    package static let recoveryKit = "keyvault/v1/recovery-kit"
    /// Version 2 of the kit: its keys, and the keys of the kit's own member of the circle.
    package static let recoveryKitV2 = "keyvault/v2/recovery-kit"
}

extension Labels {
    /// First field of the AAD of a caller's envelope (seal/open).
    package static let envelope = "keyvault/v1/envelope"
}

/// Pairing version 2: the pairing code as a CPace password (docs/PAIRING.md).
extension Labels {
    /// A new device's version 2 enrollment request.
    package static let pairingRequest = "keyvault/v2/enroll-request"
    /// The hash that names a version 2 request.
    package static let pairingRequestHash = "keyvault/v2/request-hash"
    /// CPace's channel identifier: the account and the new device's keys.
    package static let pairingChannel = "keyvault/v2/pairing-channel"
    /// CPace's ADa: the new device's ID.
    package static let pairingInitiator = "keyvault/v2/pairing-initiator"
    /// CPace's ADb: the responder and the circle as it sees it.
    package static let pairingResponder = "keyvault/v2/pairing-responder"
    /// A trusted device's half of the exchange, and the hash that names it.
    package static let pairingResponse = "keyvault/v2/pairing-response"
    /// The new device's confirmation (or refusal) of a response.
    package static let pairingConfirm = "keyvault/v2/pairing-confirm"
    /// The approver's tag over its approve entry, and the tag's input.
    package static let pairingApproval = "keyvault/v2/pairing-approval"
    /// The key of the approval tag, derived from the exchange's ISK.
    package static let pairingApprovalKey = "keyvault/v2/pairing-approval-key"
}
