import Synchronization

/// A first-come, first-served line of tickets: `take` is synchronous, so a
/// place in line is fixed the moment it is asked for.
final class JobQueue: Sendable {
    private struct State {
        var next: UInt64 = 0
        var serving: UInt64 = 0
        var waiting: [UInt64: CheckedContinuation<Void, Never>] = [:]
    }
    private let state = Mutex(State())

    func take() -> UInt64 {
        state.withLock { state in
            defer { state.next += 1 }
            return state.next
        }
    }

    package func wait(for ticket: UInt64) async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool in
                if state.serving == ticket { return true }
                state.waiting[ticket] = continuation
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// No job running or waiting.
    var isIdle: Bool { state.withLock { $0.serving == $0.next } }

    /// Jobs running or waiting.
    var depth: Int { state.withLock { Int(clamping: $0.next - $0.serving) } }

    func finish(_ ticket: UInt64) {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            precondition(state.serving == ticket, "a job finished out of turn")
            state.serving = ticket + 1
            return state.waiting.removeValue(forKey: ticket + 1)
        }
        next?.resume()
    }
}
