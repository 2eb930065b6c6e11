internal import CSodium

/// A locked, guarded buffer that one worker reuses for many short-lived
/// secrets: one `sodium_malloc` (mmap, mprotect, mlock) for a batch instead
/// of one per secret. Zeroed after every use and freed at the end. Not
/// shared: each worker owns its own.
package final class SecureScratch {
    private let pointer: UnsafeMutableRawPointer
    package let capacity: Int

    package init(capacity: Int) {
        pointer = Sodium.lockedAllocation(capacity)
        self.capacity = capacity
    }

    /// `fill` writes the secret and answers its length; `read` uses it; then it is wiped.
    package func use<R>(fill: (UnsafeMutableRawBufferPointer) -> Int, _ read: (UnsafeRawBufferPointer) -> R) -> R {
        let written = fill(UnsafeMutableRawBufferPointer(start: pointer, count: capacity))
        precondition(written <= capacity, "SecureScratch fill wrote past its capacity")
        defer { sodium_memzero(pointer, capacity) }
        return read(UnsafeRawBufferPointer(start: pointer, count: written))
    }

    deinit {
        sodium_free(pointer)
    }
}
