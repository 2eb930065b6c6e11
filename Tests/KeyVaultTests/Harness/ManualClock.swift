import Foundation
import Synchronization
import KeyVault
import KeyVaultEngine
import KeyVaultPolicy

/// The engine's clock as a test moves it: time stands still until `advance`, which wakes
/// every sleeper whose deadline it passed. A back-off, a promotion deadline or a key's
/// maximum age is then a step of the test, never a wait.
final class ManualClock: EngineClock {
    private struct Sleeper {
        var deadline: Date
        var continuation: CheckedContinuation<Void, any Error>
    }
    private struct State {
        var now: Date
        var sleepers: [UUID: Sleeper] = [:]
    }
    private let state: Mutex<State>

    /// Starts at a fixed moment, so that what a test reads off the clock is the same each run.
    init(start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        state = Mutex(State(now: start))
    }

    var now: Date { state.withLock { $0.now } }

    /// When each sleep waiting for the clock to move ends.
    var deadlines: [Date] { state.withLock { $0.sleepers.values.map(\.deadline) } }

    func sleep(for duration: Duration) async throws {
        let id = UUID()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome: Result<Void, any Error>? = state.withLock { state in
                    // Checked under the lock the cancellation handler takes: a sleep cancelled
                    // before it was recorded is not left waiting for a clock that may never move.
                    if Task.isCancelled { return .failure(CancellationError()) }
                    let deadline = state.now.addingTimeInterval(duration.seconds)
                    if deadline <= state.now { return .success(()) }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            state.withLock { $0.sleepers.removeValue(forKey: id) }?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves the time on by `duration` and wakes the sleeps it ends.
    func advance(by duration: Duration) {
        let woken = state.withLock { state in
            state.now = state.now.addingTimeInterval(duration.seconds)
            let due = state.sleepers.filter { $0.value.deadline <= state.now }
            for id in due.keys { state.sleepers[id] = nil }
            return due.values.map(\.continuation)
        }
        for continuation in woken { continuation.resume() }
    }
}

extension Duration {
    var seconds: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
