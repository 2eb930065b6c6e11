@testable import KeyVault
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
}
