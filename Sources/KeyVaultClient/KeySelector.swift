/// Which of an account's keys a read asks for.
public enum KeySelector: Sendable, Equatable, CustomStringConvertible {
    /// The current generation: what new records are sealed under.
    case current
    /// A generation number, from 1.
    case generation(Int)
    /// A key ID (32 lowercase hex characters), as an envelope or a record names its key.
    case keyID(KeyIdentifier)

    /// The path after `/keys/`.
    var pathComponent: String {
        switch self {
        case .current: return "current"
        case .generation(let number): return String(number)
        case .keyID(let id): return "id/" + id.hex
        }
    }

    public var description: String {
        switch self {
        case .current: return "the current key"
        case .generation(let number): return "generation \(number)"
        case .keyID(let id): return "key \(id)"
        }
    }
}

/// One path segment, percent-encoded: the daemon then judges what it names.
enum PathSegment {
    static func encode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "@"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".utf8)
                out += "%" + String(decoding: [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]], as: UTF8.self)
            }
        }
        return out
    }
}
