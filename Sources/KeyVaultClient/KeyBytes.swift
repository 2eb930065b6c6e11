#if canImport(Glibc)
import Glibc
#endif

/// Key bytes that are wiped when the last reference goes: on a page of their
/// own, locked out of swap where the system allows it, kept out of core dumps,
/// and never printed.
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
        // A page of its own: locks are per page and do not nest, so a key that shared a page
        // with another would unlock it when released.
        let page = max(Int(sysconf(Int32(_SC_PAGESIZE))), 4096)
        storage = .allocate(byteCount: (max(bytes.count, 1) + page - 1) / page * page, alignment: page)
        _ = mlock(storage.baseAddress, storage.count)  // best effort: RLIMIT_MEMLOCK may say no
        _ = madvise(storage.baseAddress, storage.count, MADV_DONTDUMP)  // not in a core dump either
        if !bytes.isEmpty { storage.copyMemory(from: bytes) }
    }

    deinit {
        Wipe.bytes(storage)
        _ = munlock(storage.baseAddress, storage.count)
        storage.deallocate()
    }

    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(UnsafeRawBufferPointer(rebasing: storage[0..<count]))
    }

    public var description: String { "KeyBytes(\(count) bytes, not shown)" }
}
