public import Foundation

/// An account's row: public facts and the KDF's salt and cost.
public struct AccountRecord: Sendable, Equatable {
    public var id: AccountID
    public var createdAt: Date
    public var kdf: KDFParameters
    public var salt: [UInt8]
    public var accessibility: Accessibility
    public var deviceID: String
    public var signingPublicKey: SigningPublicKey
    public var boxPublicKey: BoxPublicKey
    public var currentGeneration: Int
    public var failedUnlocks: Int
    public var backoffUntil: Date
    public var deviceName: String = ""
}

/// A keychain item as stored: its attributes and its wrapped bytes.
public struct StoredItem: Sendable, Equatable {
    public var attributes: KeychainItem
    public var wrapped: [UInt8]

    public var context: WrapContext {
        // The account string was validated when the item was written.
        WrapContext(account: try! AccountID(validating: attributes.account), kind: attributes.kind, generation: attributes.generation)
    }
}

/// Everything the vault holds about one account.
public struct AccountSnapshot: Sendable {
    public var account: AccountRecord
    public var generations: [KeyGeneration]
    public var items: [StoredItem]
    /// Verified circle log entries, encoded, in order.
    public var circleLog: [[UInt8]] = []
    /// This device's own enrollment request, while it is joining.
    public var enrollment: [UInt8]?
    /// The pairing secret the enrollment request commits to.
    public var pairingSecret: [UInt8]?
    /// Wrong pairing codes, by requesting device.
    public var approvalFailures: [String: Int] = [:]
}
