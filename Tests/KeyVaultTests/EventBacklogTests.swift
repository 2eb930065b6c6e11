import Testing
@testable import KeyVault
@testable import KeyVaultEngine
@testable import KeyVaultPolicy
import KeyVaultAccount

/// What a resuming event stream is owed (`Last-Event-ID`), one outcome per case.
@Suite("Event backlog")
struct EventBacklogTests {
    func backlog(events count: Int) -> EventBacklog {
        var backlog = EventBacklog(epoch: "00112233aabbccdd")
        for n in 0..<count { _ = backlog.append(AccountEvent(name: "e\(n + 1)", fields: [:])) }
        return backlog
    }

    func names(_ events: [NumberedEvent]) -> [String] { events.map(\.event.name) }

    @Test("ids count from 1 under the backlog's epoch")
    func ids() {
        var backlog = EventBacklog(epoch: "00112233aabbccdd")
        #expect(backlog.append(.locked).id == "00112233aabbccdd-1")
        #expect(backlog.append(.unlocked).id == "00112233aabbccdd-2")
    }

    @Test("a new stream is owed nothing")
    func newStream() {
        #expect(backlog(events: 5).replay(after: nil).isEmpty)
    }

    @Test("a stream that saw event 3 of 5 is given 4 and 5, with their ids")
    func resumes() {
        let replay = backlog(events: 5).replay(after: "00112233aabbccdd-3")
        #expect(names(replay) == ["e4", "e5"])
        #expect(replay.map(\.id) == ["00112233aabbccdd-4", "00112233aabbccdd-5"])
    }

    @Test("a stream that saw the last event is owed nothing")
    func upToDate() {
        #expect(backlog(events: 5).replay(after: "00112233aabbccdd-5").isEmpty)
    }

    @Test("a stream that saw event 0 (a resync before any event) is given every event kept")
    func fromZero() {
        #expect(names(backlog(events: 2).replay(after: "00112233aabbccdd-0")) == ["e1", "e2"])
    }

    @Test("an id older than the backlog keeps is answered resync, carrying the last id")
    func tooOld() {
        let replay = backlog(events: EventBacklog.capacity + 10).replay(after: "00112233aabbccdd-5")
        #expect(names(replay) == ["resync"])
        #expect(replay.first?.id == "00112233aabbccdd-\(EventBacklog.capacity + 10)")
    }

    @Test("the oldest event kept can still be resumed after")
    func oldestKept() {
        let total = EventBacklog.capacity + 10
        let replay = backlog(events: total).replay(after: "00112233aabbccdd-10")
        #expect(replay.count == EventBacklog.capacity)
        #expect(replay.first?.event.name == "e11")
    }

    @Test("an id of another epoch (a daemon since restarted) is answered resync")
    func otherEpoch() {
        #expect(names(backlog(events: 5).replay(after: "ffffffffffffffff-3")) == ["resync"])
    }

    @Test("an id from the future is answered resync")
    func future() {
        #expect(names(backlog(events: 5).replay(after: "00112233aabbccdd-6")) == ["resync"])
    }

    @Test("malformed ids are answered resync", arguments: ["", "garbage", "00112233aabbccdd-", "00112233aabbccdd--1",
                                                           "00112233aabbccdd-+3", "00112233aabbccdd-3-4", "00112233aabbccdd-99999999999999999999999"])
    func malformed(id: String) {
        #expect(names(backlog(events: 5).replay(after: id)) == ["resync"])
    }
}
