internal import CSodium

/// A locked buffer that one worker reuses for many short-lived secrets: one
/// slot of the `LockedPool` for a batch instead of one per secret. Zeroed
/// after every use and released at the end. Not shared: each worker owns its
/// own.
package final class SecureScratch {
    private let slot: LockedPool.Slot
    package let capacity: Int

    package init(capacity: Int) {
        slot = LockedPool.shared.allocate(capacity)
        self.capacity = capacity
    }

    /// `fill` writes the secret and answers its length; `read` uses it; then it is wiped.
    package func use<R>(fill: (UnsafeMutableRawBufferPointer) -> Int, _ read: (UnsafeRawBufferPointer) -> R) -> R {
        let written = fill(UnsafeMutableRawBufferPointer(start: slot.pointer, count: capacity))
        precondition(written <= capacity, "SecureScratch fill wrote past its capacity")
        defer { sodium_memzero(slot.pointer, capacity) }
        return read(UnsafeRawBufferPointer(start: slot.pointer, count: written))
    }

    deinit {
        // The pool zeroes the slot when it takes it back.
        LockedPool.shared.release(slot)
    }
}
