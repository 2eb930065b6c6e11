#if canImport(Glibc)
import Glibc
#endif

/// Key bytes that are wiped when the last reference goes: in memory of their
/// own, locked out of swap where the system allows it, and never printed.
///
/// Copy them out only into memory you wipe as carefully; prefer the daemon's
/// seal and open, which keep the key in the daemon.
public final class KeyBytes: @unchecked Sendable, CustomStringConvertible {
    // Immutable after init; freed only by deinit, when no one else holds it.
    private let storage: UnsafeMutableRawBufferPointer

    public let count: Int

    /// Copies `bytes` (which the caller then wipes).
    init(copying bytes: UnsafeRawBufferPointer) {
        count = bytes.count
        storage = .allocate(byteCount: max(bytes.count, 1), alignment: 16)
        _ = mlock(storage.baseAddress, storage.count)  // best effort: RLIMIT_MEMLOCK may say no
        if !bytes.isEmpty { storage.copyMemory(from: bytes) }
    }

    deinit {
        explicit_bzero(storage.baseAddress!, storage.count)
        _ = munlock(storage.baseAddress, storage.count)
        storage.deallocate()
    }

    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(UnsafeRawBufferPointer(rebasing: storage[0..<count]))
    }

    public var description: String { "KeyBytes(\(count) bytes, not shown)" }
}
