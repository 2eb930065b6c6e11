/// A 16-byte identifier: a value of its own kind (a device's, a key's), held
/// as two big-endian words, parsed once where it enters and written as 32
/// lowercase hex characters only at the edges (JSON, SQL, log lines).
/// `Kind` keeps a device ID from standing where a key ID belongs.
///
/// In a target of its own, with no dependency, so that the protocol, the
/// client library and the CLI share one type (an ID is no secret: its hex is
/// plain Swift, not a constant-time codec).
public struct ID16<Kind: ID16Kind>: Hashable, Comparable, Sendable, CustomStringConvertible, Codable {
    public static var byteCount: Int { 16 }
    private let high: UInt64
    private let low: UInt64

    /// Exactly 16 bytes; nil otherwise.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 16 else { return nil }
        var high: UInt64 = 0, low: UInt64 = 0
        for (index, byte) in bytes.enumerated() {
            if index < 8 { high = high << 8 | UInt64(byte) } else { low = low << 8 | UInt64(byte) }
        }
        self.high = high
        self.low = low
    }

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

    public var bytes: [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: high >> (56 - 8 * $0)) } + (0..<8).map { UInt8(truncatingIfNeeded: low >> (56 - 8 * $0)) }
    }

    public var hex: String {
        func digits(_ word: UInt64) -> String {
            let text = String(word, radix: 16)
            return String(repeating: "0", count: 16 - text.count) + text
        }
        return digits(high) + digits(low)
    }

    public var description: String { hex }

    public static func < (a: Self, b: Self) -> Bool { (a.high, a.low) < (b.high, b.low) }

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

public protocol ID16Kind: Sendable {
    /// How a refusal names it: "a device ID".
    static var name: String { get }
}

public enum DeviceIDKind: ID16Kind { public static var name: String { "a device ID" } }
public enum KeyIDKind: ID16Kind { public static var name: String { "a key ID" } }
