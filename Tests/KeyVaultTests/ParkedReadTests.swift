import Foundation
@testable import KeyVault
@testable import KeyVaultEngine
@testable import KeyVaultPolicy
import KeyVaultAccount
import KeyVaultProtocol
import Testing

/// A parked key read is answered from the publish that woke it (`WaitingHub.wait`), not worked
/// out again, unless another publish came since: then it decides again from the state held now.
/// Whether a task has reached its wait when the wake comes or not, the outcome is the same
/// (an armed slot keeps the wake); the last case takes the armed path on purpose.
@Suite("A parked read answered from the wake")
struct ParkedReadTests {
    let f = AccountFixture()

    @Test("a wake carries the state its publish left; one overtaken by a later publish (a lock) carries nothing")
    func wakeCarriesItsState() async throws {
        let owners = AccountOwners()
        let hub = WaitingHub(owners: owners)
        let owner = owners.owner(f.account)
        let locked = try f.loaded(accessibility: .afterFirstUnlock)
        _ = owner.publish(locksAtStart: 0, now: f.t0) { $0 = locked }
        let deadline = ContinuousClock.now + .seconds(30)

        // Woken by the unlock's publish: the read's answer is that state's, ready.
        let token = hub.arm(f.account)
        let parked = Task { await hub.wait(f.account, token, until: deadline) }
        await Task.yield()
        _ = owner.publish(locksAtStart: 0, now: f.t0) { $0 = try! f.unlocked(locked) }
        owner.waiters.wakeAll(with: owner.current)
        let woken = try #require(await parked.value, "no state came with the wake")
        guard case .ready = woken.read(.current, withRelay: true).availability else {
            Issue.record("the wake's state does not release the key"); return
        }

        // A wake whose publish a lock overtook: the read decides again (nil), never from the older state.
        let again = hub.arm(f.account)
        let overtaken = Task { await hub.wait(f.account, again, until: deadline) }
        await Task.yield()
        let stale = owner.current
        _ = owner.lockAtOnce(now: f.t0)
        owner.waiters.wakeAll(with: stale)
        #expect(await overtaken.value == nil, "a read was answered from a state a lock had replaced")

        // Woken between its arming and its wait: the wake is kept for it.
        let early = hub.arm(f.account)
        owner.waiters.wakeAll(with: owner.current)
        let kept = try #require(await hub.wait(f.account, early, until: deadline))
        #expect(kept.isLocked)
    }
}
