import Synchronization
import KeyVaultProtocol
import KeyVaultAccount
import KeyVaultEngine
import KeyVaultPolicy

/// A request the daemon holds open: a waiting key read (`?wait=`) or an event
/// stream. It is filed under its connection so that the connection's close,
/// or a policy reload that no longer allows it, ends it at once instead of
/// when its wait runs out.
final class HeldRequest: Sendable {
    /// Why a held request ends early.
    enum End: Sendable {
        /// The client closed its side of the connection but may still read the answer.
        case halfClosed
        /// The connection is closed: nobody will read an answer.
        case gone
        /// The daemon is stopping: a waiting read answers now.
        case stopping
        /// The policy in force no longer allows it; the refusal to answer with.
        case forbidden(Refusal)
    }

    enum Kind: Sendable {
        case waitingRead, eventStream
    }

    let kind: Kind
    let account: AccountID
    /// Every permission the request needs to go on, for `account`.
    let needs: [Permission]

    private struct State {
        var end: End?
        var onEnd: (@Sendable (End) -> Void)?
        var release: (@Sendable (HeldRequest) -> Void)?
    }

    private let state: Mutex<State>

    init(kind: Kind, account: AccountID, needs: [Permission], release: (@Sendable (HeldRequest) -> Void)?) {
        self.kind = kind
        self.account = account
        self.needs = needs
        self.state = Mutex(State(release: release))
    }

    /// Why it ended, or nil while it may go on.
    var end: End? { state.withLock { $0.end } }

    /// Ends it (the first reason wins) and interrupts whatever it is waiting on.
    func finish(_ end: End) {
        let onEnd = state.withLock { state -> (@Sendable (End) -> Void)? in
            guard state.end == nil else { return nil }
            state.end = end
            defer { state.onEnd = nil }
            return state.onEnd
        }
        onEnd?(end)
    }

    /// Runs `operation` with `onEnd` installed: ending the request calls it
    /// (at once, if it has already ended).
    func whileHeld<T>(onEnd: @escaping @Sendable (End) -> Void, _ operation: () async throws -> T) async rethrows -> T {
        let ended = state.withLock { state -> End? in
            if state.end == nil { state.onEnd = onEnd }
            return state.end
        }
        if let ended { onEnd(ended) }
        defer { state.withLock { $0.onEnd = nil } }
        return try await operation()
    }

    /// Takes it off its connection's list; called once the request is answered.
    func release() {
        let release = state.withLock { state -> (@Sendable (HeldRequest) -> Void)? in
            defer { state.release = nil }
            return state.release
        }
        release?(self)
    }
}
