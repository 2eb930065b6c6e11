import Synchronization
import KeyVaultProtocol
import KeyVaultRelayWire

/// The nonces of the signed requests this instance accepted lately, in memory:
/// a request sent again to the same instance within its window is refused
/// without a write to the store. A read spends nothing durable (RELAY.md,
/// "Signed requests": what a replayed read can do); a write's nonce is spent
/// again, durably, in the write's own transaction.
///
/// Bounded: an entry leaves once no request carrying it can still be in the
/// window, or, past `capacity`, the oldest leaves first; a replay it then lets
/// through is one another instance would let through anyway.
final class RecentNonces: Sendable {
    struct Key: Hashable {
        var account: AccountID
        var keyID: DeviceID
        var nonce: String
    }

    private struct State {
        var seen: [Key: Int64] = [:]
        /// Insertion order, for expiry and eviction; `head` is the oldest still held.
        var order: [(key: Key, at: Int64)] = []
        var head = 0
    }

    private let state = Mutex(State())
    let capacity: Int
    /// Seconds an entry is kept after it is seen: a signature's `created` is at most the
    /// window from the clock when it is seen, and refused once more than the window away.
    static let life = 2 * RequestSignature.window + 1

    init(capacity: Int = 200_000) {
        self.capacity = capacity
    }

    /// Records the key; false when this instance saw it within its life. `now` in seconds since the epoch.
    func claim(_ key: Key, now: Int64) -> Bool {
        state.withLock { state in
            while state.head < state.order.count, state.order[state.head].at + Self.life < now || state.seen.count >= capacity {
                let oldest = state.order[state.head]
                if state.seen[oldest.key] == oldest.at { state.seen[oldest.key] = nil }
                state.head += 1
            }
            if state.head > 1024, state.head * 2 > state.order.count {
                state.order.removeFirst(state.head)
                state.head = 0
            }
            guard state.seen[key] == nil else { return false }
            state.seen[key] = now
            state.order.append((key, now))
            return true
        }
    }
}
