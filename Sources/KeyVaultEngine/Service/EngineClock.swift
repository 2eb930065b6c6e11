package import Foundation

/// What the engine reads the time from and waits on. The daemon runs on the system's; the
/// in-process harness (Tests/KeyVaultTests/Harness) on one a test moves by hand, so that a
/// back-off, a promotion deadline or a key's maximum age is tested without being waited out.
/// A relay's own timeouts (a request's deadline, a reconnect's back-off) stay on the system's:
/// they bound real I/O.
package protocol EngineClock: Sendable {
    /// What a back-off, a promotion deadline kept in the vault and a key's age are measured against.
    var now: Date { get }
    /// Waits `duration` of this clock's time; throws `CancellationError` if the task is cancelled.
    func sleep(for duration: Duration) async throws
}

/// The system's clock: what the daemon runs on.
package struct SystemClock: EngineClock {
    package init() {}
    package var now: Date { Date() }
    package func sleep(for duration: Duration) async throws { try await Task.sleep(for: duration) }
}
