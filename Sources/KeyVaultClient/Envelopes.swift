import FoundationEssentials

/// A record to seal, and what binds it to its place (its ID, say): `aad` is
/// authenticated, not encrypted, and opening needs the same bytes.
public struct SealItem: Sendable {
    public var plaintext: [UInt8]
    public var aad: [UInt8]

    public init(plaintext: [UInt8], aad: [UInt8] = []) {
        self.plaintext = plaintext
        self.aad = aad
    }
}

/// A sealed batch: one envelope per item, in order, all under one generation.
public struct SealedBatch: Sendable {
    public var generation: Int
    public var keyID: KeyIdentifier
    public var envelopes: [[UInt8]]
}

/// An envelope to open, with the `aad` it was sealed with.
public struct OpenItem: Sendable {
    public var envelope: [UInt8]
    public var aad: [UInt8]

    public init(envelope: [UInt8], aad: [UInt8] = []) {
        self.envelope = envelope
        self.aad = aad
    }
}

// The wire (docs/API.md, "Seal and open"): bytes as base64, JSONEncoder's default for Data.
struct SealRequest: Encodable {
    struct Item: Encodable { var plaintext: Data; var aad: Data }
    var items: [Item]
    var keyId: KeyIdentifier?
}

struct SealResponse: Decodable {
    var generation: Int
    var keyId: KeyIdentifier
    var envelopes: [Data]
}

struct OpenRequest: Encodable {
    struct Item: Encodable { var envelope: Data; var aad: Data }
    var items: [Item]
}

struct OpenResponse: Decodable {
    var plaintexts: [Data]
}
