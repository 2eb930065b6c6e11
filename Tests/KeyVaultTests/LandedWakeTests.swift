import Testing
import KeyVaultProtocol
import KeyVaultRelay
@testable import KeyVaultRelayService

/// A store's wake-up that names the last cursor its commit stored wakes only the held reads that had
/// not read that far (issue 35: the echo of an instance's own write cost each of its readers a read).
@Suite("The store's wake-up: which reads a commit's last cursor wakes")
struct LandedWakeTests {
    let account = try! AccountID(validating: "landed")

    @Test("a NOTIFY payload is read as the account and its cursor, the account alone, or, unread, as any account")
    func payloads() {
        #expect(RelayWake(payload: RelayWake.payload(account, through: RelayCursor(42))) == .landed(account, through: RelayCursor(42)))
        #expect(RelayWake(payload: "landed") == .accounts([account]))
        for unread in ["", " ", "landed ", "landed 0", "landed -3", "landed 4 5", "landed 99999999999999999999", "land!ed 4", " 4", "landed x"] {
            #expect(RelayWake(payload: unread) == .any, "payload \(unread.debugDescription)")
        }
        #expect(RelayWake.landed(account, through: RelayCursor(1)).concerns(account))
        #expect(!RelayWake.landed(account, through: RelayCursor(1)).concerns(try! AccountID(validating: "other")))
    }

    @Test("a held read is woken by a commit past what it read, not by one it read already")
    func heldReadWokenOnlyPastWhatItRead() async {
        let waiters = Waiters(metrics: RelayMetrics())
        let deadline = ContinuousClock.now + .seconds(30)
        let mark = waiters.mark(account)
        let held = Task { await waiters.wait(account, after: mark, readThrough: RelayCursor(10), until: deadline) }
        await until { waiters.waiting(account) == 1 }
        // The echo of the write whose rows the read answered last: it stays held.
        waiters.storeChanged(.landed(account, through: RelayCursor(10)), path: .store)
        waiters.storeChanged(.landed(account, through: RelayCursor(7)), path: .store)
        #expect(waiters.waiting(account) == 1)
        waiters.storeChanged(.landed(account, through: RelayCursor(11)), path: .store)
        guard case .other = await held.value else {
            Issue.record("a commit past what the read had read did not wake it")
            return
        }
        #expect(waiters.waiting(account) == 0)
    }

    @Test("the wake-up counts are slots shared by accounts: a read between its mark and its hold still wakes for its account's commit")
    func countsInSlots() async {
        let waiters = Waiters(metrics: RelayMetrics())
        let mark = waiters.mark(account)
        // A commit of the read's account after its mark, then more other accounts' than there are slots.
        waiters.storeChanged(.landed(account, through: RelayCursor(9)), path: .store)
        for n in 0...Waiters.slotCount {
            let other = try! AccountID(validating: "other-\(n)")
            waiters.storeChanged(.landed(other, through: RelayCursor(1)), path: .store)
            waiters.storeChanged(.accounts([other]), path: .store)
        }
        // The commit it missed ends the hold at once (not at the deadline), whoever shares its slot.
        let started = ContinuousClock.now
        _ = await waiters.wait(account, after: mark, readThrough: RelayCursor(5), until: ContinuousClock.now + .seconds(30))
        #expect(ContinuousClock.now - started < .seconds(5), "a commit whose count was forgotten was missed")
    }

    @Test("a commit between a read's mark and its hold wakes it at once only if it is past what the read saw")
    func commitBeforeTheHold() async {
        let waiters = Waiters(metrics: RelayMetrics())
        let deadline = ContinuousClock.now + .milliseconds(300)
        var mark = waiters.mark(account)
        waiters.storeChanged(.landed(account, through: RelayCursor(5)), path: .store)
        let started = ContinuousClock.now
        _ = await waiters.wait(account, after: mark, readThrough: RelayCursor(5), until: deadline)
        #expect(ContinuousClock.now - started >= .milliseconds(200), "a commit the read had seen ended its hold")

        mark = waiters.mark(account)
        waiters.storeChanged(.landed(account, through: RelayCursor(6)), path: .store)
        let again = ContinuousClock.now
        _ = await waiters.wait(account, after: mark, readThrough: RelayCursor(5), until: ContinuousClock.now + .seconds(30))
        #expect(ContinuousClock.now - again < .seconds(5), "a commit past what the read saw did not end its hold")

        // A wake-up that does not say its cursor wakes every read of the account.
        mark = waiters.mark(account)
        waiters.storeChanged(.accounts([account]), path: .store)
        _ = await waiters.wait(account, after: mark, readThrough: RelayCursor(100), until: ContinuousClock.now + .seconds(30))
    }

    private func until(_ condition: () -> Bool) async {
        while !condition() { await Task.yield() }
    }
}
