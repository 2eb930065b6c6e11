import DequeModule
import Synchronization

/// One account's jobs, in the order they were posted, and whether a task is draining them:
/// at most one is, so the account's jobs run one at a time, each to its end.
final class JobInbox: Sendable {
    typealias Job = @Sendable () async -> Void
    private struct State {
        var queued = Deque<Job>()
        var draining = false
        var running = false
    }
    private let state = Mutex(State())

    /// Queues `job`; true if no task drains the inbox now, and the caller must start one.
    func push(_ job: @escaping Job) -> Bool {
        state.withLock { state in
            state.queued.append(job)
            defer { state.draining = true }
            return !state.draining
        }
    }

    /// The next job for the draining task, or nil: the inbox is empty and the task ends (in the
    /// same step, so a job pushed after it starts a new task).
    func next() -> Job? {
        state.withLock { state in
            guard let job = state.queued.popFirst() else {
                state.draining = false
                state.running = false
                return nil
            }
            state.running = true
            return job
        }
    }

    /// No job running or queued.
    var isIdle: Bool { state.withLock { !$0.draining } }

    /// Jobs running or queued.
    var depth: Int { state.withLock { $0.queued.count + ($0.running ? 1 : 0) } }
}
