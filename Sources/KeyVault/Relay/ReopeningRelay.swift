import Synchronization

/// A relay opened when it first can be: the daemon starts and serves its vault
/// even when the relay cannot be opened yet (a volume not mounted, a server
/// that is down). Until it opens, every call fails as `unreachable` and is
/// tried again by the caller's back-off; wake-ups begin once it is open.
public final class ReopeningRelay: Relay {
    public let address: RelayAddress
    private let opener: @Sendable (RelayAddress) async throws -> any Relay
    private struct State {
        var relay: (any Relay)?
        /// Wake-up streams handed out before the relay opened.
        var waiting: [AsyncStream<Void>.Continuation] = []
    }
    private let state = Mutex(State())

    public init(address: RelayAddress, opener: @escaping @Sendable (RelayAddress) async throws -> any Relay) {
        self.address = address
        self.opener = opener
    }

    /// The relay, opening it if it is not yet.
    private func relay() async throws -> any Relay {
        if let relay = state.withLock({ $0.relay }) { return relay }
        let opened: any Relay
        do {
            opened = try await opener(address)
        } catch let error as RelayError {
            throw error
        } catch {
            throw RelayError.unreachable("\(error)")
        }
        let (relay, waiting) = state.withLock { state -> (any Relay, [AsyncStream<Void>.Continuation]) in
            // Two callers may open at once: the first one kept wins.
            if let relay = state.relay { return (relay, []) }
            state.relay = opened
            defer { state.waiting = [] }
            return (opened, state.waiting)
        }
        for continuation in waiting { Self.forward(relay.wakeups(), to: continuation) }
        return relay
    }

    /// Opens it now if it can; `false` if it cannot yet.
    public func tryOpen() async -> Bool { (try? await relay()) != nil }

    public func publish(_ record: RelayRecord) async throws { try await relay().publish(record) }
    public func publish(batch records: [RelayRecord]) async throws { try await relay().publish(batch: records) }
    public func rows(after cursor: Int64, limit: Int) async throws -> [RelayRow] { try await relay().rows(after: cursor, limit: limit) }

    public func shutdown() async {
        let (relay, waiting) = state.withLock { ($0.relay, $0.waiting) }
        for continuation in waiting { continuation.finish() }
        await relay?.shutdown()
    }

    public func wakeups() -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        if let relay = state.withLock({ state -> (any Relay)? in
            if state.relay == nil { state.waiting.append(continuation) }
            return state.relay
        }) {
            Self.forward(relay.wakeups(), to: continuation)
        }
        return stream
    }

    private static func forward(_ source: AsyncStream<Void>, to continuation: AsyncStream<Void>.Continuation) {
        // Opening is itself news: what landed meanwhile is to be read.
        continuation.yield()
        let task = Task {
            for await _ in source { continuation.yield() }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
    }
}
