import Synchronization

package struct DeadlineExceeded: Error {
    package init() {}
}

/// Runs `body` in its own task and answers with its result, or throws
/// `DeadlineExceeded` once `limit` has passed, whichever comes first. Unlike a
/// task group, it does not wait for a body that ignores cancellation (a query
/// on a half-open TCP connection) before answering.
package func withDeadline<T: Sendable>(_ limit: Duration, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    let race = DeadlineRace<T>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            race.start(continuation, limit: limit, body)
        }
    } onCancel: {
        race.finish(.failure(CancellationError()))
    }
}

private final class DeadlineRace<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var finished = false
        var work: Task<Void, Never>?
        var timer: Task<Void, Never>?
    }
    private let state = Mutex(State())

    package func start(_ continuation: CheckedContinuation<T, any Error>, limit: Duration, _ body: @escaping @Sendable () async throws -> T) {
        let alreadyCancelled = state.withLock { state -> Bool in
            if state.finished { return true }
            state.continuation = continuation
            return false
        }
        if alreadyCancelled { continuation.resume(throwing: CancellationError()); return }
        let work = Task {
            do { self.finish(.success(try await body())) } catch { self.finish(.failure(error)) }
        }
        let timer = Task {
            guard (try? await Task.sleep(for: limit)) != nil else { return }
            self.finish(.failure(DeadlineExceeded()))
        }
        state.withLock {
            $0.work = work
            $0.timer = timer
        }
        if state.withLock({ $0.finished }) { work.cancel(); timer.cancel() }
    }

    /// The first call wins; the loser's task is cancelled.
    package func finish(_ result: Result<T, any Error>) {
        let taken = state.withLock { state -> (CheckedContinuation<T, any Error>?, Task<Void, Never>?, Task<Void, Never>?)? in
            guard !state.finished else { return nil }
            state.finished = true
            defer { state.continuation = nil }
            return (state.continuation, state.work, state.timer)
        }
        guard let (continuation, work, timer) = taken else { return }
        work?.cancel()
        timer?.cancel()
        continuation?.resume(with: result)
    }
}
