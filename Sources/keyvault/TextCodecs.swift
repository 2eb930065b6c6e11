import FoundationEssentials
import KeyVaultClient

// Bytes as the socket API and a terminal write them. The CLI links neither libsodium nor
// OpenSSL (its one-shot start loads no crypto library); base64 is Foundation's, as the
// client library decodes a key with, and every copy that held the bytes is wiped.

enum Base64 {
    static func encode(_ bytes: [UInt8]) -> String {
        var data = Data(bytes)
        defer { data.withUnsafeMutableBytes { Wipe.bytes($0) } }
        return data.base64EncodedString()
    }

    /// The standard alphabet with padding; nil on anything else.
    static func decode(_ text: String) -> [UInt8]? {
        guard var data = Data(base64Encoded: text) else { return nil }
        defer { data.withUnsafeMutableBytes { Wipe.bytes($0) } }
        return [UInt8](data)
    }
}

enum Hex {
    /// Lowercase hex, each digit computed without a branch or a table on the byte (as
    /// libsodium's `sodium_bin2hex`): a key's digits take the same time whatever they are.
    static func encode(_ bytes: [UInt8]) -> String {
        var digits = [UInt8]()
        digits.reserveCapacity(bytes.count * 2)
        defer { Wipe.bytes(&digits) }
        for byte in bytes {
            digits.append(digit(UInt32(byte >> 4)))
            digits.append(digit(UInt32(byte & 0x0f)))
        }
        return String(decoding: digits, as: UTF8.self)
    }

    /// 0-9 → '0'-'9', 10-15 → 'a'-'f': below 10, `nibble - 10` wraps and its high bits take 39 off.
    private static func digit(_ nibble: UInt32) -> UInt8 {
        UInt8(truncatingIfNeeded: 87 &+ nibble &+ (((nibble &- 10) >> 8) & ~38))
    }
}
