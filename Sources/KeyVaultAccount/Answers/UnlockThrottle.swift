package import Foundation

/// The back-off after wrong passphrases: the first failure waits `base`, each
/// further one doubles it, up to `max`. Pure: time is passed in.
package struct UnlockThrottle: Sendable, Equatable {
    package var failures: Int
    package var until: Date

    package init(failures: Int, until: Date) {
        self.failures = failures
        self.until = until
    }

    package static func delaySeconds(afterFailures failures: Int, base: Int, max: Int) -> Int {
        guard failures > 0 else { return 0 }
        let doublings = min(failures - 1, 30)
        return min(max, base << doublings)
    }

    /// Seconds left to wait at `now`, or nil when an attempt may go ahead.
    package func retryAfter(at now: Date) -> Int? {
        let left = until.timeIntervalSince(now)
        return left > 0 ? Int(left.rounded(.up)) : nil
    }

    /// The state after one more wrong passphrase at `now`.
    package func failed(at now: Date, base: Int, max: Int) -> UnlockThrottle {
        let count = failures + 1
        return UnlockThrottle(failures: count, until: now.addingTimeInterval(TimeInterval(Self.delaySeconds(afterFailures: count, base: base, max: max))))
    }
}
