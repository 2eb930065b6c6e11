internal import CSodium

/// Secret bytes in guarded, locked memory (`sodium_malloc`: guard pages,
/// `mlock`, excluded from core dumps) that are zeroed when released.
///
/// The bytes are written only while the value is being built, inside this
/// layer, so sharing the finished value across tasks is safe. No pointer to
/// them leaves the crypto layer.
public final class SecureBytes: @unchecked Sendable {
    private let pointer: UnsafeMutableRawPointer
    public let count: Int

    /// Zero-filled secure memory of `count` bytes.
    package init(zeroedCount count: Int) {
        pointer = Sodium.lockedAllocation(count)
        self.count = count
    }

    /// `count` bytes from libsodium's CSPRNG.
    public convenience init(randomCount count: Int) {
        self.init(zeroedCount: count)
        randombytes_buf(pointer, count)
    }

    /// A copy of `bytes`. The caller remains responsible for the source.
    public convenience init(copying bytes: some Collection<UInt8>) {
        self.init(zeroedCount: bytes.count)
        let destination = UnsafeMutableRawBufferPointer(start: pointer, count: count)
        destination.copyBytes(from: bytes)
    }

    /// Builds the bytes in place: `body` writes them and returns how many it wrote.
    package init(capacity: Int, fill body: (UnsafeMutableRawBufferPointer) throws -> Int) rethrows {
        let pointer = Sodium.lockedAllocation(capacity)
        self.pointer = pointer
        do {
            let written = try body(UnsafeMutableRawBufferPointer(start: pointer, count: capacity))
            precondition(written <= capacity, "SecureBytes fill wrote past its capacity")
            self.count = written
        } catch {
            sodium_free(pointer)
            throw error
        }
    }

    deinit {
        // sodium_free zeroes the region before unmapping it.
        sodium_free(pointer)
    }

    package func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    /// Constant-time comparison.
    public func constantTimeEquals(_ other: SecureBytes) -> Bool {
        guard count == other.count else { return false }
        return withUnsafeBytes { a in other.withUnsafeBytes { b in ConstantTime.equal(a, b) } }
    }

    /// The standard base64 form, for the one place a key leaves the daemon: a
    /// `ready` answer to an authorised caller.
    public func base64EncodedString() -> String {
        withUnsafeBytes { Base64.encode($0) }
    }

    /// Lowercase hex, for the CLI's `--raw hex`.
    public func hexEncodedString() -> String {
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
