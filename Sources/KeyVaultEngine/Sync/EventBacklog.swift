import KeyVaultCrypto
package import KeyVaultAccount

/// An event as an account's stream sends it: with the SSE `id` a client hands
/// back as `Last-Event-ID` to resume after a dropped connection.
package struct NumberedEvent: Sendable, Equatable {
    package var id: String
    package var event: AccountEvent
}

/// The last events of one account, numbered, so a stream that reconnects
/// misses nothing it could still be told, and is told when it may have.
///
/// An id is `EPOCH-N`: the epoch is random, chosen when the backlog is made
/// (so an id from before a restart is never mistaken for one of now), and N
/// counts the account's events from 1. A pure value: its owner holds it
/// under the lock that also registers listeners, so an event is either
/// replayed to a new listener or sent to it live, never both, never neither.
package struct EventBacklog: Sendable {
    /// How many events a reconnecting stream can be given again.
    package static let capacity = 64

    let epoch: String
    private(set) var lastNumber: UInt64 = 0
    private var recent: [(number: UInt64, event: AccountEvent)] = []

    init(epoch: String = EventBacklog.newEpoch()) {
        self.epoch = epoch
    }

    static func newEpoch() -> String {
        Hex.encode(Random.bytes(8))
    }

    /// Numbers an event and keeps it for replay.
    mutating func append(_ event: AccountEvent) -> NumberedEvent {
        lastNumber += 1
        recent.append((lastNumber, event))
        if recent.count > Self.capacity { recent.removeFirst(recent.count - Self.capacity) }
        return NumberedEvent(id: id(lastNumber), event: event)
    }

    /// What a stream that last saw `lastEventID` (nil: a new stream) is owed
    /// before live events: nothing for a new stream; the events after the one
    /// it names when they are all still here; else one `resync`, which tells
    /// the client to read the state again.
    func replay(after lastEventID: String?) -> [NumberedEvent] {
        guard let lastEventID else { return [] }
        guard let seen = number(in: lastEventID), seen <= lastNumber else { return [resync] }
        let missed = lastNumber - seen
        guard missed <= UInt64(recent.count) else { return [resync] }
        return recent.suffix(Int(missed)).map { NumberedEvent(id: id($0.number), event: $0.event) }
    }

    /// Carries the id of the last event, so resuming from it starts at the next one.
    private var resync: NumberedEvent {
        NumberedEvent(id: id(lastNumber), event: AccountEvent(name: "resync", fields: [:]))
    }

    private func id(_ number: UInt64) -> String { "\(epoch)-\(number)" }

    /// N of an id of this epoch; nil for another epoch or anything malformed.
    private func number(in id: String) -> UInt64? {
        let parts = id.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0] == epoch, parts[1].utf8.count <= 20,
              parts[1].utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        return UInt64(parts[1])
    }
}
