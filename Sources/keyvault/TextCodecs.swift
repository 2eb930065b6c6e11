import FoundationEssentials
import KeyVaultClient
import KeyVaultIDs

// Bytes as the socket API and a terminal write them. The CLI links neither libsodium nor
// OpenSSL (its one-shot start loads no crypto library). Base64 is FoundationEssentials', as
// the client library decodes a key with (table lookups on the bytes, unlike libsodium's);
// the copies this file makes are wiped, not those Foundation makes inside its codec.

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
    /// Lowercase, branch-free (`BranchFreeHex`).
    static func encode(_ bytes: [UInt8]) -> String {
        var digits = BranchFreeHex.digits(bytes)
        defer { Wipe.bytes(&digits) }
        return String(decoding: digits, as: UTF8.self)
    }
}
