package import KeyVaultCrypto

/// A 16-byte identifier: a value of its own kind (a device's, a key's), held
/// as two big-endian words, parsed once where it enters and written as 32
/// lowercase hex characters only at the edges (JSON, SQL, log lines).
/// `Kind` keeps a device ID from standing where a key ID belongs.
package struct ID16<Kind: ID16Kind>: Hashable, Comparable, Sendable, CustomStringConvertible, Codable {
    package static var byteCount: Int { 16 }
    private let high: UInt64
    private let low: UInt64

    package init(bytes: some Collection<UInt8>) throws(ProtocolError) {
        guard bytes.count == 16 else { throw .malformed("\(Kind.name) is 16 bytes, not \(bytes.count)") }
        var high: UInt64 = 0, low: UInt64 = 0
        for (index, byte) in bytes.enumerated() {
            if index < 8 { high = high << 8 | UInt64(byte) } else { low = low << 8 | UInt64(byte) }
        }
        self.high = high
        self.low = low
    }

    /// 32 lowercase hex characters, and nothing else.
    package init?(hex: some StringProtocol) {
        guard HexID.isValid(hex), let bytes = Hex.decode(String(hex)), let id = try? Self(bytes: bytes) else { return nil }
        self = id
    }

    package var bytes: [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: high >> (56 - 8 * $0)) } + (0..<8).map { UInt8(truncatingIfNeeded: low >> (56 - 8 * $0)) }
    }

    package var hex: String { Hex.encode(bytes) }
    package var description: String { hex }

    package static func < (a: Self, b: Self) -> Bool { (a.high, a.low) < (b.high, b.low) }

    package init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let id = Self(hex: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "\(Kind.name) is 32 lowercase hex characters"))
        }
        self = id
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(hex)
    }
}

package protocol ID16Kind: Sendable {
    /// How a refusal names it: "a device ID".
    static var name: String { get }
}

package enum DeviceIDKind: ID16Kind { package static var name: String { "a device ID" } }
package enum KeyIDKind: ID16Kind { package static var name: String { "a key ID" } }

/// A device's ID in an account: BLAKE2b-128 over its two public keys (`DeviceKeys.deviceID`).
package typealias DeviceID = ID16<DeviceIDKind>
/// A generation key's ID: BLAKE2b-128 of the key under `Labels.keyID`.
package typealias KeyID = ID16<KeyIDKind>

extension KeyID {
    /// The ID of a generation key.
    package init(of key: SecretKey) {
        self.init(hash: key.keyID(label: Labels.keyID))
    }
}

extension ID16 {
    /// From a 16-byte hash this code computed (not from input): its size is not in doubt.
    package init(hash: [UInt8]) {
        precondition(hash.count == 16, "an ID is a 16-byte hash")
        try! self.init(bytes: hash)
    }
}

/// Device IDs and key IDs as text: 16 bytes as 32 lowercase hex characters.
package enum HexID {
    package static func isValid(_ text: some StringProtocol) -> Bool {
        text.utf8.count == 32 && text.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }
    }
}
