public import FoundationEssentials

/// A key the daemon released: its bytes, and which of the account's keys it is.
public struct AccountKey: Sendable {
    public var account: String
    public var generation: Int
    /// 32 lowercase hex characters: what envelopes and records name the key by.
    public var keyID: KeyIdentifier
    public var bytes: KeyBytes
    public var createdAt: Date?
    /// Whether this is the account's current generation.
    public var isCurrent: Bool
}
