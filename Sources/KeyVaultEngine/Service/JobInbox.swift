import DequeModule
import Synchronization

/// One account's jobs, in the order they were posted, and whether a task is draining them:
/// at most one is, so the account's jobs run one at a time, each to its end.
final class JobInbox: Sendable {
    typealias Job = @Sendable () async -> Void
    /// A job, and the caller waiting for it (none for a follow-up).
    typealias Entry = (job: Job, caller: JobCaller?)
    private struct State {
        var queued = Deque<Entry>()
        var draining = false
        var running = false
    }
    private let state = Mutex(State())

    /// Queues `job`; true if no task drains the inbox now, and the caller must start one.
    func push(_ job: @escaping Job, for caller: JobCaller? = nil) -> Bool {
        state.withLock { state in
            state.queued.append((job, caller))
            defer { state.draining = true }
            return !state.draining
        }
    }

    /// The next job for the draining task, or nil: the inbox is empty and the task ends (in the
    /// same step, so a job pushed after it starts a new task).
    func next() -> Entry? {
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

/// A caller waiting for its job's answer: its cancellation (a client that hung up, a stop) reaches
/// the job, queued or running, as it did when jobs ran on their callers' tasks. The job then runs
/// in a task of its own, cancelled with its caller.
final class JobCaller: Sendable {
    private let state = Mutex<(cancelled: Bool, task: Task<Void, Never>?)>((false, nil))

    /// The caller was cancelled: its job runs cancelled (or is cancelled now, if it runs).
    func cancel() {
        state.withLock { state -> Task<Void, Never>? in
            state.cancelled = true
            return state.task
        }?.cancel()
    }

    /// Runs `job` in a task cancelled with the caller, and with the account's task (a stop past
    /// its limit), and waits for it to end.
    func run(_ job: @escaping @Sendable () async -> Void) async {
        let task = Task { await job() }
        let cancelled = state.withLock { state -> Bool in
            state.task = task
            return state.cancelled
        }
        if cancelled { task.cancel() }
        await withTaskCancellationHandler { await task.value } onCancel: { task.cancel() }
        state.withLock { $0.task = nil }
    }
}
