internal import CSodium

/// For keyvault-bench's same-run baseline: what one `sodium_malloc` region
/// per secret costs (the daemon's way before `LockedPool`), measured in the
/// calling process while `body` runs.
package enum SodiumMallocBaseline {
    /// Holds `secrets` regions of `size` bytes (filled at random) while `body` runs, then frees them.
    package static func holding<R>(_ secrets: Int, of size: Int, _ body: () throws -> R) rethrows -> R {
        Sodium.ensureReady()
        var regions: [UnsafeMutableRawPointer] = []
        regions.reserveCapacity(secrets)
        defer { regions.forEach { sodium_free($0) } }
        for _ in 0..<secrets {
            guard let region = sodium_malloc(size) else { break }
            randombytes_buf(region, size)
            regions.append(region)
        }
        return try body()
    }
}
