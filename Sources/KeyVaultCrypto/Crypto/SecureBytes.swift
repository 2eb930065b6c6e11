internal import CSodium

/// Secret bytes in guarded, locked memory that are zeroed when released: a
/// slot of the process's `LockedPool` (pages locked with `mlock`, excluded
/// from core dumps, guard pages around each region of many slots), or a
/// region of its own for a secret over 2 KiB.
///
/// The bytes are written only while the value is being built, inside this
/// layer, so sharing the finished value across tasks is safe. No pointer to
/// them leaves the crypto layer.
package final class SecureBytes: @unchecked Sendable {
    private let slot: LockedPool.Slot
    private var pointer: UnsafeMutableRawPointer { slot.pointer }
    package let count: Int

    /// Zero-filled secure memory of `count` bytes.
    package init(zeroedCount count: Int) {
        slot = LockedPool.shared.allocate(count)
        self.count = count
    }

    /// `count` bytes from libsodium's CSPRNG.
    package convenience init(randomCount count: Int) {
        self.init(zeroedCount: count)
        randombytes_buf(pointer, count)
    }

    /// A copy of `bytes`. The caller remains responsible for the source.
    package convenience init(copying bytes: some Collection<UInt8>) {
        self.init(zeroedCount: bytes.count)
        let destination = UnsafeMutableRawBufferPointer(start: pointer, count: count)
        destination.copyBytes(from: bytes)
    }

    /// Builds the bytes in place: `body` writes them and returns how many it wrote.
    package init(capacity: Int, fill body: (UnsafeMutableRawBufferPointer) throws -> Int) rethrows {
        let slot = LockedPool.shared.allocate(capacity)
        self.slot = slot
        do {
            let written = try body(UnsafeMutableRawBufferPointer(start: slot.pointer, count: capacity))
            precondition(written <= capacity, "SecureBytes fill wrote past its capacity")
            self.count = written
        } catch {
            LockedPool.shared.release(slot)
            throw error
        }
    }

    deinit {
        // The pool zeroes the slot before anything else may use it.
        LockedPool.shared.release(slot)
    }

    package func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    /// Constant-time comparison.
    package func constantTimeEquals(_ other: SecureBytes) -> Bool {
        guard count == other.count else { return false }
        return withUnsafeBytes { a in other.withUnsafeBytes { b in ConstantTime.equal(a, b) } }
    }

    /// The standard base64 form, as a String (ordinary memory): for the CLI and
    /// tests. The daemon writes a released key with `writeBase64(into:)`.
    package func base64EncodedString() -> String {
        withUnsafeBytes { Base64.encode($0) }
    }

    /// The length of the standard base64 form (padded, no terminator).
    package var base64Count: Int { (count + 2) / 3 * 4 }

    /// Writes the standard base64 form into `out` (at least `base64Count + 1`
    /// bytes: libsodium ends it with a NUL, which is not counted) and answers
    /// `base64Count`, with no copy in between: for the one place a key leaves
    /// the daemon, a `ready` answer rendered into a buffer that is wiped when
    /// released.
    package func writeBase64(into out: UnsafeMutableRawBufferPointer) -> Int {
        precondition(out.count > base64Count, "base64 output buffer too small")
        withUnsafeBytes { bytes in
            // Exactly the encoding and its NUL: libsodium zero-fills whatever room it is given past that.
            _ = sodium_bin2base64(out.baseAddress!.assumingMemoryBound(to: CChar.self), base64Count + 1,
                                  bytes.bindMemory(to: UInt8.self).baseAddress, count, sodium_base64_VARIANT_ORIGINAL)
        }
        return base64Count
    }

    /// Lowercase hex, for the CLI's `--raw hex`.
    package func hexEncodedString() -> String {
        withUnsafeBytes { Hex.encode($0) }
    }
}

extension SecureBytes {
    /// A secure copy of a range.
    package func secureSlice(_ range: Range<Int>) -> SecureBytes {
        precondition(range.lowerBound >= 0 && range.upperBound <= count)
        return SecureBytes(capacity: range.count) { out in
            withUnsafeBytes { out.baseAddress!.copyMemory(from: $0.baseAddress!.advanced(by: range.lowerBound), byteCount: range.count) }
            return range.count
        }
    }

    /// An ordinary copy of a range that holds no secret (headers, signatures).
    package func publicBytes(_ range: Range<Int>) -> [UInt8] {
        precondition(range.lowerBound >= 0 && range.upperBound <= count)
        return withUnsafeBytes { Array($0[range]) }
    }
}
