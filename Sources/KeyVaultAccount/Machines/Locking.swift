package import Foundation
package import KeyVaultProtocol

/// Locking, decided without I/O: whether an unlock may try a passphrase now
/// (the back-off), what a wrong or a right passphrase changes, and what a lock
/// drops. The owner keeps the back-off in the vault before it changes memory,
/// and holds the secrets this value says may be held.
package struct Locking: Sendable, Equatable {
    package enum Attempt: Sendable, Equatable {
        case throttled(retryAfterSeconds: Int)
        case tryPassphrase
    }

    package enum Effect: Sendable, Equatable {
        /// Keep the back-off in the vault (before anything else).
        case persistThrottle(UnlockThrottle)
        /// Drop the KEK and the device's identity from memory.
        case forgetKEK
        /// Drop the generation keys from memory (`whenUnlocked` accounts).
        case forgetKeys
        /// Tell the account's event streams (a read's wake-up follows from the changed state, not from this).
        case announce(AccountEvent)
    }

    package private(set) var throttle: UnlockThrottle
    package let accessibility: Accessibility
    package private(set) var isUnlocked: Bool

    package init(throttle: UnlockThrottle, accessibility: Accessibility, isUnlocked: Bool = false) {
        self.throttle = throttle
        self.accessibility = accessibility
        self.isUnlocked = isUnlocked
    }

    /// While the back-off runs, no passphrase is tried (no KDF work is done).
    package func attempt(at now: Date) -> Attempt {
        throttle.retryAfter(at: now).map { .throttled(retryAfterSeconds: $0) } ?? .tryPassphrase
    }

    /// A wrong passphrase: the back-off grows (kept in the vault first; if it
    /// cannot be kept, the caller answers with the back-off all the same).
    package mutating func wrongPassphrase(at now: Date, baseSeconds: Int, maxSeconds: Int) -> [Effect] {
        throttle = throttle.failed(at: now, base: baseSeconds, max: maxSeconds)
        return [.persistThrottle(throttle)]
    }

    /// The right passphrase: unlocked, and the back-off forgotten.
    package mutating func unlocked() -> [Effect] {
        isUnlocked = true
        var effects: [Effect] = []
        if throttle.failures > 0 {
            throttle = UnlockThrottle(failures: 0, until: Date(timeIntervalSince1970: 0))
            effects.append(.persistThrottle(throttle))
        }
        return effects + [.announce(.unlocked)]
    }

    /// Locked: the KEK goes, and for `whenUnlocked` the keys too.
    package mutating func lock() -> [Effect] {
        isUnlocked = false
        return [.forgetKEK] + (accessibility == .whenUnlocked ? [.forgetKeys] : []) + [.announce(.locked)]
    }

    /// Whether generation keys may be in memory now: unlocked, or
    /// `afterFirstUnlock` (whose keys stay after a lock, as on Apple's platforms).
    /// A key stored while this says no is not held, whatever the order of events.
    package var mayHoldKeys: Bool { isUnlocked || accessibility == .afterFirstUnlock }
}
