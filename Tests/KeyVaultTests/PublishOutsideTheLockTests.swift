import Dispatch
import Foundation
@testable import KeyVaultEngine
import KeyVaultAccount
import Synchronization
import Testing

/// A job's step of the machine runs on a copy outside the account's lock; the lock is held only to
/// swap the result in (`AccountOwner.publish`). A lock made at once meanwhile makes the step run
/// again on what it left; a stream of them cannot hold the job back past a few tries.
@Suite("A job's publish: the step outside the lock")
struct PublishOutsideTheLockTests {
    let f = AccountFixture()

    @Test("a reader on another thread reads the published state while a job's step runs")
    func readersDoNotWaitOnAStep() throws {
        let owner = AccountOwners().owner(f.account)
        let unlocked = try f.unlocked(try f.loaded())
        _ = owner.publish(locksAtStart: 0, now: f.t0) { $0 = unlocked }
        let read = DispatchSemaphore(value: 0)
        let sawLocked = Mutex<Bool?>(nil)
        let (_, after, answered) = owner.publish(locksAtStart: 0, now: f.t0) { state -> Bool in
            _ = state?.handle(.lock, now: f.t0)
            // Mid-step: a reader elsewhere gets the state published before it, at once.
            Thread.detachNewThread {
                sawLocked.withLock { $0 = owner.state?.isLocked }
                read.signal()
            }
            return read.wait(timeout: .now() + 5) == .success
        }
        #expect(answered, "a reader waited on the step")
        #expect(sawLocked.withLock { $0 } == false, "the reader saw the step's state before it was published")
        #expect(after?.isLocked == true)
    }

    @Test("a lock made at once during a step makes it run again on the locked state")
    func lockDuringAStep() throws {
        let owner = AccountOwners().owner(f.account)
        _ = owner.publish(locksAtStart: 0, now: f.t0) { $0 = try! f.unlocked(try! f.loaded()) }
        var runs: [Bool] = []
        let (_, after, answer) = owner.publish(locksAtStart: 0, now: f.t0) { state -> Int in
            runs.append(state?.isLocked ?? false)
            if runs.count == 1 { _ = owner.lockAtOnce(now: f.t0) }
            return runs.count
        }
        #expect(runs == [false, true], "the step ran on \(runs)")
        #expect(answer == 2, "the answer of a step whose state was replaced came back")
        #expect(after?.isLocked == true)
        #expect(owner.state?.isLocked == true)
    }

    @Test("a step planned on the state published now is swapped in as it is; one planned before a lock is stepped again")
    func plannedStep() throws {
        let owner = AccountOwners().owner(f.account)
        _ = owner.publish(locksAtStart: 0, now: f.t0) { $0 = try! f.unlocked(try! f.loaded()) }
        // Planned on the state held now, and nothing published since: the machine is not stepped again.
        var held = try #require(owner.current)
        var planned = held.state
        _ = planned.handle(.lock, now: f.t0)
        var steps = 0
        let (_, after, answer) = owner.publish(locksAtStart: 0, now: f.t0, planned: AccountOwner.Planned(version: held.version, state: planned, answer: "planned")) { _ in
            steps += 1
            return "stepped"
        }
        #expect(steps == 0 && answer == "planned", "a planned step with nothing published since was stepped again")
        #expect(after?.isLocked == true)

        // Planned, then a change made at once (a back-off) published before it: stepped again on what that left.
        _ = owner.publish(locksAtStart: 0, now: f.t0) { $0 = try! f.unlocked(try! f.loaded()) }
        held = try #require(owner.current)
        planned = held.state
        _ = owner.changeAtOnce { _ in }
        let (_, _, again) = owner.publish(locksAtStart: 0, now: f.t0, planned: AccountOwner.Planned(version: held.version, state: planned, answer: "planned")) { _ in
            steps += 1
            return "stepped"
        }
        #expect(steps == 1 && again == "stepped", "a step planned before another publish was swapped in over it")
    }

    @Test("locks made at once during every step: after a few tries the step runs under the lock, once")
    func streamOfLocks() throws {
        let owner = AccountOwners().owner(f.account)
        _ = owner.publish(locksAtStart: 0, now: f.t0) { $0 = try! f.unlocked(try! f.loaded()) }
        var runs = 0
        let (_, after, answer) = owner.publish(locksAtStart: 0, now: f.t0) { _ -> Int in
            runs += 1
            // Under the lock (the last try) a lock at once would wait on it: none is made there.
            if runs <= AccountOwner.optimisticTries { _ = owner.lockAtOnce(now: f.t0) }
            return runs
        }
        #expect(runs == AccountOwner.optimisticTries + 1)
        #expect(answer == runs)
        #expect(after?.isLocked == true)
    }

    @Test("a lock's signer set, made between a job's read of the identity and its set, is not overwritten by the earlier identity")
    func lockBetweenReadAndSet() throws {
        let owner = AccountOwners().owner(f.account)
        _ = owner.publish(locksAtStart: 0, now: f.t0) { $0 = try! f.unlocked(try! f.loaded()) }
        // What the relay signer holds: the identity of the last set.
        var signer: DeviceIdentity?
        var sets = 0
        owner.keepInStep { state in
            sets += 1
            if sets == 1 {
                // The job read the unlocked state; a lock on another thread publishes and sets its signer first.
                _ = owner.lockAtOnce(now: f.t0)
                owner.keepInStep { signer = $0?.identity }
                #expect(signer == nil)
            }
            signer = state?.identity
        }
        #expect(owner.state?.isLocked == true)
        #expect(signer == nil, "the signing key outlived the lock")
        #expect(sets == 2, "the earlier identity was not set again from the state published now")
    }

    @Test("a publish between every read and set: after a few tries the signer is set under the lock, from the state published last")
    func streamOfPublishesWhileSetting() throws {
        let owner = AccountOwners().owner(f.account)
        _ = owner.publish(locksAtStart: 0, now: f.t0) { $0 = try! f.unlocked(try! f.loaded()) }
        var sets = 0
        var last: Bool?
        owner.keepInStep { state in
            sets += 1
            // Under the lock (the last try) a lock at once would wait on it: none is made there.
            if sets <= AccountOwner.optimisticTries { _ = owner.lockAtOnce(now: f.t0) }
            last = state?.isLocked
        }
        #expect(sets == AccountOwner.optimisticTries + 1)
        #expect(last == true)
    }
}
