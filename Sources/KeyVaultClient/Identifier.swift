/// A 16-byte identifier of its own kind, as the daemon writes it: 32 lowercase
/// hex characters. A key's ID names the key in envelopes and records (and
/// reveals nothing of it); a device's names a device of the account's circle.
/// `Kind` keeps one from standing where the other belongs.
public struct Identifier<Kind: IdentifierKind>: Hashable, Sendable, CustomStringConvertible, Codable {
    private let high: UInt64
    private let low: UInt64

    /// 32 lowercase hex characters, and nothing else.
    public init?(hex: some StringProtocol) {
        let digits = Array(hex.utf8)
        guard digits.count == 32 else { return nil }
        var words: [UInt64] = [0, 0]
        for (index, digit) in digits.enumerated() {
            let value: UInt8
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = digit - UInt8(ascii: "a") + 10
            default: return nil
            }
            words[index / 16] = words[index / 16] << 4 | UInt64(value)
        }
        (high, low) = (words[0], words[1])
    }

    public var hex: String {
        func digits(_ word: UInt64) -> String {
            let text = String(word, radix: 16)
            return String(repeating: "0", count: 16 - text.count) + text
        }
        return digits(high) + digits(low)
    }

    public var description: String { hex }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let id = Self(hex: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "\(Kind.name) is 32 lowercase hex characters"))
        }
        self = id
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(hex)
    }
}

public protocol IdentifierKind: Sendable {
    static var name: String { get }
}

public enum KeyIdentifierKind: IdentifierKind { public static var name: String { "a key ID" } }
public enum DeviceIdentifierKind: IdentifierKind { public static var name: String { "a device ID" } }

/// A generation key's ID.
public typealias KeyIdentifier = Identifier<KeyIdentifierKind>
/// A device's ID in an account.
public typealias DeviceIdentifier = Identifier<DeviceIdentifierKind>
