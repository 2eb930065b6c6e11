/// Lowercase hex whose digits are computed without a branch or a table indexed by the
/// byte, as libsodium's `sodium_bin2hex`: writing a key's digits takes the same time
/// whatever they are. For the CLI, which links no libsodium; the caller wipes the digits.
package enum BranchFreeHex {
    package static func digits(_ bytes: [UInt8]) -> [UInt8] {
        var digits = [UInt8]()
        digits.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            digits.append(digit(UInt32(byte >> 4)))
            digits.append(digit(UInt32(byte & 0x0f)))
        }
        return digits
    }

    /// 0-9 → '0'-'9', 10-15 → 'a'-'f': below 10, `nibble - 10` wraps and its high bits take 39 off.
    private static func digit(_ nibble: UInt32) -> UInt8 {
        UInt8(truncatingIfNeeded: 87 &+ nibble &+ (((nibble &- 10) >> 8) & ~38))
    }
}
