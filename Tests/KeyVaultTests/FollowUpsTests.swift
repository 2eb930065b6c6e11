@testable import KeyVault
@testable import KeyVaultEngine
@testable import KeyVaultPolicy
import KeyVaultProtocol
import Synchronization
import Testing

/// The follow-ups a job queues (`AccountOwners.enqueue`) have an owner at a stop: the daemon waits
/// for them before it shuts its relay down, and cancels those still running at the limit.
@Suite("Follow-ups at a stop")
struct FollowUpsTests {
    @Test("a stop waits for every follow-up queued, those they queue included; one that does not end is cancelled at the limit")
    func followUpsEndBeforeTheStop() async throws {
        let owners = AccountOwners()
        let account = try AccountID(validating: "follow")
        let ended = Mutex<[String]>([])
        owners.enqueue(account) {
            try? await Task.sleep(for: .milliseconds(200))
            ended.withLock { $0.append("first") }
            // A follow-up queued by a follow-up, while the stop already waits.
            owners.enqueue(account) { ended.withLock { $0.append("second") } }
        }
        #expect(owners.followUpsRunning == 1)
        await owners.finishFollowUps(within: .seconds(30))
        #expect(ended.withLock { $0 } == ["first", "second"])
        #expect(owners.followUpsRunning == 0)

        // One that waits for what never comes ends when cancelled, at the limit.
        owners.enqueue(account) {
            while !Task.isCancelled { try? await Task.sleep(for: .seconds(60)) }
            ended.withLock { $0.append("cancelled") }
        }
        await owners.finishFollowUps(within: .milliseconds(300))
        #expect(ended.withLock { $0.last } == "cancelled")
        #expect(owners.followUpsRunning == 0)
    }

    @Test("records handed outside the line: the line is free while their write waits, those handed meanwhile go together next, at most 100 a write, and a stop waits for them")
    func recordsSentOutsideTheLine() async throws {
        let owners = AccountOwners()
        let account = try AccountID(validating: "outside")
        func records(_ range: Range<Int>) -> [OwedRecord] {
            range.map { OwedRecord(record: RelayRecord(kind: .ack, account: account, recipient: nil, logSeq: nil,
                                                       body: [UInt8(truncatingIfNeeded: $0), UInt8($0 >> 8)]), outboxID: Int64($0)) }
        }
        let writes = Mutex<[[OwedRecord]]>([])
        let (release, releasing) = AsyncStream<Void>.makeStream()
        let send: @Sendable ([OwedRecord]) async -> Void = { batch in
            let first = writes.withLock { $0.append(batch); return $0.count == 1 }
            // The first write waits on a relay that does not answer until released.
            if first { for await _ in release { break } }
        }
        owners.sendOutsideLine(account, records(0..<1), by: send)
        try await waitFor { writes.withLock { $0.count } == 1 }
        // The write waits; the account's line does not.
        #expect(await owners.run(account) { "a job" } == "a job")
        // The account's task, which ran the job, ends once its inbox is empty; the sender's stays.
        try await waitFor { owners.followUpsRunning == 1 }
        owners.sendOutsideLine(account, records(1..<3), by: send)
        owners.sendOutsideLine(account, records(3..<250), by: send)
        #expect(owners.followUpsRunning == 1, "a second task started while one was sending")
        #expect(owners.recordsSending == 250)
        releasing.yield()
        await owners.finishFollowUps(within: .seconds(30))
        #expect(writes.withLock { $0.map(\.count) } == [1, 100, 100, 49])
        #expect(writes.withLock { $0.flatMap { $0 } } == records(0..<250), "a record lost, repeated or out of order")
        #expect(owners.recordsSending == 0 && owners.followUpsRunning == 0)
        #expect(owners.count == 0, "the owner of an account not held outlived its last write")
    }

    private func waitFor(_ condition: () -> Bool) async throws {
        for _ in 0..<1_000 where !condition() { try await Task.sleep(for: .milliseconds(10)) }
        #expect(condition())
    }
}
