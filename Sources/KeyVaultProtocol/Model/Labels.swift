import KeyVaultCrypto
/// Every domain-separation string keyvaultd uses, named once. A value here is
/// part of the on-disk format or the protocol: changing one is a format break.
public enum Labels {
    /// AAD prefix for a secret wrapped under the account's KEK (docs/FORMAT.md).
    public static let wrap = "keyvault/v1/wrap"
    /// Key IDs: BLAKE2b-128 of the key under this label.
    public static let keyID = "keyvault/v1/key-id"
    /// Device IDs: BLAKE2b-128 of a device's two public keys under this label.
    public static let deviceID = "keyvault/v1/device-id"
}

extension Labels {
    /// A new device's signed enrollment request.
    public static let enrollRequest = "keyvault/v1/enroll-request"
    /// The hash that names an enrollment request.
    public static let requestHash = "keyvault/v1/request-hash"
    /// The six-digit pairing code.
    public static let pairingCode = "keyvault/v1/pairing-code"
    /// A circle log entry's signed bytes.
    public static let logEntry = "keyvault/v1/log-entry"
    /// The hash that chains log entries.
    public static let logHash = "keyvault/v1/log-hash"
    /// A key share's signed payload (inside the sealed box).
    public static let share = "keyvault/v1/share"
    /// A device's signed acknowledgement of a share.
    public static let ack = "keyvault/v1/ack"
}

extension Labels {
    /// The new device's commitment to its pairing secret, in its request.
    public static let pairingCommit = "keyvault/v1/pairing-commit"
    /// A trusted device's challenge nonce for one request.
    public static let enrollChallenge = "keyvault/v1/enroll-challenge"
    /// The new device's reveal of its pairing secret.
    public static let enrollReveal = "keyvault/v1/enroll-reveal"
}

extension Labels {
    /// A recovery kit: every key generation of an account under a kit passphrase.
    public static let recoveryKit = "keyvault/v1/recovery-kit"
}

extension Labels {
    /// First field of the AAD of a caller's envelope (seal/open).
    public static let envelope = "keyvault/v1/envelope"
}

/// Pairing version 2: the pairing code as a CPace password (docs/PAIRING.md).
extension Labels {
    /// A new device's version 2 enrollment request.
    public static let pairingRequest = "keyvault/v2/enroll-request"
    /// The hash that names a version 2 request.
    public static let pairingRequestHash = "keyvault/v2/request-hash"
    /// CPace's channel identifier: the account and the new device's keys.
    public static let pairingChannel = "keyvault/v2/pairing-channel"
    /// CPace's ADa: the new device's ID.
    public static let pairingInitiator = "keyvault/v2/pairing-initiator"
    /// CPace's ADb: the responder and the circle as it sees it.
    public static let pairingResponder = "keyvault/v2/pairing-responder"
    /// A trusted device's half of the exchange, and the hash that names it.
    public static let pairingResponse = "keyvault/v2/pairing-response"
    /// The new device's confirmation (or refusal) of a response.
    public static let pairingConfirm = "keyvault/v2/pairing-confirm"
    /// The approver's tag over its approve entry, and the tag's input.
    public static let pairingApproval = "keyvault/v2/pairing-approval"
    /// The key of the approval tag, derived from the exchange's ISK.
    public static let pairingApprovalKey = "keyvault/v2/pairing-approval-key"
}
