internal import CSodium

/// libsodium must be initialised once before any other call; every entry point
/// of the crypto layer goes through `Sodium.ready`.
package enum Sodium {
    package static let ready: Bool = {
        // sodium_init is idempotent and thread-safe; a negative result means the
        // library cannot provide secure randomness, which nothing here survives.
        guard sodium_init() >= 0 else { fatalError("libsodium failed to initialise") }
        return true
    }()

    package static func ensureReady() { precondition(ready) }

    /// Zeroed, locked, guarded memory (`sodium_malloc`); freed with `sodium_free`, which zeroes it.
    package static func lockedAllocation(_ count: Int) -> UnsafeMutableRawPointer {
        ensureReady()
        // sodium_malloc(0) is valid but returns a guard-page pointer; keep at least one byte.
        guard let pointer = sodium_malloc(max(count, 1)) else {
            // Each region is its own mapping with guard pages: either RLIMIT_MEMLOCK or vm.max_map_count ran out.
            fatalError("sodium_malloc failed: out of locked memory or memory mappings (RLIMIT_MEMLOCK, vm.max_map_count)")
        }
        sodium_memzero(pointer, max(count, 1))
        return pointer
    }
}
