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
}
