internal import CSodium

/// Hex and base64 through libsodium's constant-time codecs, so encoding a
/// secret does not leak it through timing.
package enum Hex {
    package static func encode(_ bytes: UnsafeRawBufferPointer) -> String {
        if bytes.isEmpty { return "" }
        var out = [CChar](repeating: 0, count: bytes.count * 2 + 1)
        _ = sodium_bin2hex(&out, out.count, bytes.bindMemory(to: UInt8.self).baseAddress!, bytes.count)
        defer { sodium_memzero(&out, out.count) }
        return String(decoding: out.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    package static func encode(_ bytes: [UInt8]) -> String {
        bytes.withUnsafeBytes { encode($0) }
    }

    /// Lowercase or uppercase hex, no separators; nil on anything else.
    package static func decode(_ string: String) -> [UInt8]? {
        let utf8 = Array(string.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        var out = [UInt8](repeating: 0, count: utf8.count / 2)
        var written = 0
        let rc = utf8.withUnsafeBufferPointer { input in
            input.withMemoryRebound(to: CChar.self) { chars in
                sodium_hex2bin(&out, out.count, chars.baseAddress, chars.count, nil, &written, nil)
            }
        }
        guard rc == 0, written == out.count else { return nil }
        return out
    }
}

package enum Base64 {
    private static var variant: Int32 { sodium_base64_VARIANT_ORIGINAL }

    package static func encode(_ bytes: UnsafeRawBufferPointer) -> String {
        let length = sodium_base64_encoded_len(bytes.count, variant)
        var out = [CChar](repeating: 0, count: length)
        _ = sodium_bin2base64(&out, length, bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count, variant)
        defer { sodium_memzero(&out, out.count) }
        return String(decoding: out.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    package static func encode(_ bytes: [UInt8]) -> String {
        bytes.withUnsafeBytes { encode($0) }
    }

    /// Standard alphabet with padding; nil on anything else.
    package static func decode(_ string: String) -> [UInt8]? {
        let utf8 = Array(string.utf8)
        var out = [UInt8](repeating: 0, count: utf8.count / 4 * 3 + 3)
        var written = 0
        // No end pointer: any character outside the alphabet is an error.
        let rc = utf8.withUnsafeBufferPointer { input in
            input.withMemoryRebound(to: CChar.self) { chars in
                sodium_base642bin(&out, out.count, chars.baseAddress, chars.count, nil, &written, nil, variant)
            }
        }
        guard rc == 0 else { return nil }
        return Array(out.prefix(written))
    }
}
