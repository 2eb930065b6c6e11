import struct Foundation.Date
import Synchronization
package import KeyVaultProtocol
package import KeyVaultAccount

/// The directory from an account to its owner. Each owner has an inbox of jobs
/// and one task that runs them (started by a job posted to an empty inbox, ended
/// when it is empty again): one at a time, in the order they were posted, each to
/// its end (vault first, then memory) before the next begins, publishing the
/// state they leave. API calls, relay passes, promotion timers and the follow-ups
/// a job queues are all jobs; nothing else writes an account's state but a lock,
/// an unlock or a back-off made at once (`KeyVaultService.update` checks). The
/// directory's own lock covers only the lookup: no account's job, read or wait
/// ever waits on another account's.
///
/// A job's own steps may ask for the same account again (a rotation runs a
/// relay pass): that runs inline, on the account's task, never queued behind it.
///
/// A name used once keeps nothing: the owner of an account this device does not
/// hold is forgotten as soon as nothing needs it (no job, record being sent, waiter, listener,
/// exchange, timer or prepared identity), and prepared identities are bounded,
/// so a caller naming accounts that do not exist cannot grow memory (issue 32).
package final class AccountOwners: Sendable {
    /// The account whose job the current task is running, if any.
    @TaskLocal static var running: AccountID?
    /// How many times the account was locked at once (`AccountOwner.lockAtOnce`) when the
    /// running job took its place in line: a lock after that (sent after the job was asked
    /// for) is undone by nothing the job publishes.
    @TaskLocal static var locksAtStart: UInt64 = 0

    /// At most this many identities made for a sign-in (`identityNonce`) and not yet
    /// taken by a creation or enrollment; the oldest is forgotten past it.
    static let preparedIdentityLimit = 256

    private let owners = Mutex<[AccountID: AccountOwner]>([:])
    /// The follow-ups queued and not yet ended, so that a stopping daemon waits for them
    /// (`finishFollowUps`) instead of leaving them to run against a relay it shut down.
    private let followUps = Mutex<(next: UInt64, running: [UInt64: Task<Void, Never>])>((0, [:]))
    /// The accounts with a prepared identity, oldest first.
    private let prepared = Mutex<[AccountID]>([])

    /// The account's owner, made on first use (a creation or enrollment that may not happen yet).
    func owner(_ account: AccountID) -> AccountOwner {
        owners.withLock { owners in
            if let owner = owners[account] { return owner }
            let owner = AccountOwner(account)
            owners[account] = owner
            return owner
        }
    }

    /// The owner of an account this device holds (published state), if any.
    func holding(_ account: AccountID) -> AccountOwner? {
        guard let owner = owners.withLock({ $0[account] }), owner.isHeld else { return nil }
        return owner
    }

    /// The account's owner if one was made, without making one.
    package func existing(_ account: AccountID) -> AccountOwner? {
        owners.withLock { $0[account] }
    }

    /// Every account this device holds, sorted by ID.
    var held: [AccountOwner] {
        owners.withLock { Array($0.values) }.filter(\.isHeld).sorted { $0.id < $1.id }
    }

    var heldIDs: [AccountID] { held.map(\.id) }

    /// Every account's timers are cancelled: the engine is stopping.
    package func cancelTimers() {
        for owner in owners.withLock({ Array($0.values) }) { owner.timers.cancelAll() }
    }

    /// The state the account's jobs last published; nil for one this device does not hold.
    func state(_ account: AccountID) -> AccountState? {
        owners.withLock { $0[account] }?.state
    }

    /// Reads one value of the published state without copying the rest.
    package func read<T>(_ account: AccountID, _ body: (AccountState) throws -> T) rethrows -> T? {
        guard let owner = owners.withLock({ $0[account] }) else { return nil }
        return try owner.read(body)
    }

    /// Runs `body` as the account's next job (or inline, inside one of its jobs) and answers its result:
    /// the job goes into the account's inbox, and the account's one task runs it in its turn.
    /// The caller's cancellation reaches the job (`JobCaller`): queued, it runs cancelled; running, it is cancelled.
    func run<T: Sendable>(_ account: AccountID, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        if Self.running == account { return try await body() }
        let caller = JobCaller()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                post(account, for: caller) {
                    do { continuation.resume(returning: try await body()) } catch { continuation.resume(throwing: error) }
                }
            }
        } onCancel: { caller.cancel() }
    }

    func run<T: Sendable>(_ account: AccountID, _ body: @escaping @Sendable () async -> T) async -> T {
        if Self.running == account { return await body() }
        let caller = JobCaller()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                post(account, for: caller) { continuation.resume(returning: await body()) }
            }
        } onCancel: { caller.cancel() }
    }

    /// Queues a follow-up: its place is taken now (after every job queued so
    /// far, before any queued later), and nobody waits for it.
    func enqueue(_ account: AccountID, _ body: @escaping @Sendable () async -> Void) {
        post(account, body)
    }

    /// Puts `job` in the account's inbox, under the directory's lock (an owner being forgotten cannot
    /// take a job its successor would not run), with what it runs under: the account as the one
    /// running, the count of locks made at once so far (what the job may not undo), and the caller
    /// whose turn an Argon2id run inside it takes (`KDFRunner.caller`). The account's task starts
    /// if none is draining the inbox.
    private func post(_ account: AccountID, for waiting: JobCaller? = nil, _ job: @escaping @Sendable () async -> Void) {
        let caller = KDFRunner.caller
        let start = withOwner(account) { owner -> AccountOwner? in
            let locks = owner.locksAtOnce
            let first = owner.inbox.push({
                await KDFRunner.$caller.withValue(caller) {
                    await Self.$locksAtStart.withValue(locks) { await Self.$running.withValue(account) { await job() } }
                }
            }, for: waiting)
            return first ? owner : nil
        }
        if let start { drain(start) }
    }

    /// The account's task: runs the inbox's jobs one at a time, in order, each to its end, and
    /// ends when the inbox is empty (the next job starts another). With an owner: a stopping
    /// daemon waits for it, and cancels it past its limit (`finishFollowUps`).
    private func drain(_ owner: AccountOwner) {
        track {
            while let (job, caller) = owner.inbox.next() {
                if let caller { await caller.run(job) } else { await job() }
            }
            self.forgetIfIdle(owner.id)
        }
    }

    /// Runs `body` as a follow-up outside every account's line, with an owner (`finishFollowUps`
    /// waits for it at a stop): each step it takes in an account's line is a job of its own.
    func followUp(_ body: @escaping @Sendable () async -> Void) {
        track(body)
    }

    /// Takes the account's place for what follows an unlock (`AccountOwner.catchUps`) at once,
    /// and runs `body` as a follow-up outside the line once every earlier catch-up has ended.
    func catchUpAfterUnlock(_ account: AccountID, _ body: @escaping @Sendable () async -> Void) {
        let (owner, ticket) = withOwner(account) { ($0, $0.catchUps.take()) }
        track {
            await owner.catchUps.wait(for: ticket)
            await body()
            owner.catchUps.finish(ticket)
            self.forgetIfIdle(account)
        }
    }

    /// Waits until what followed every unlock so far has ended (`catchUpAfterUnlock`): for the
    /// calls that read the keys held and the log (a rotation, a revoke, an approval, a recovery
    /// kit), outside the line. Never from inside a job: a catch-up's steps are jobs.
    func caughtUp(_ account: AccountID) async {
        let (owner, ticket) = withOwner(account) { ($0, $0.catchUps.take()) }
        await owner.catchUps.wait(for: ticket)
        owner.catchUps.finish(ticket)
        forgetIfIdle(account)
    }

    /// Hands `records` to the relay outside the account's line (issue 34): a job that owes the relay
    /// a record (an acknowledgement, a pairing message) ends without waiting on it, so a relay that is
    /// slow or cannot be written holds back only these records, never the account's next job. They are
    /// in the vault's outbox already (`Publishing.owe`). Records handed while a write is under way go
    /// together in the next one, at most `outgoingBatch` at a time; `send` is the only writer of this
    /// account's records handed here, one write at a time. At a stop (cancelled) `send` writes nothing.
    func sendOutsideLine(_ account: AccountID, _ records: [OwedRecord], by send: @escaping @Sendable ([OwedRecord]) async -> Void) {
        guard !records.isEmpty else { return }
        let owner = withOwner(account) { $0 }
        guard owner.outgoing.withLock({ $0.hand(records) }) else { return }  // the write under way takes them next
        track {
            while let batch = owner.outgoing.withLock({ $0.next(atMost: Self.outgoingBatch) }) {
                await send(batch)
                owner.outgoing.withLock { $0.finished(batch) }
            }
            self.forgetIfIdle(account)
        }
    }

    /// Runs `body` for the account outside its line, as a follow-up a stop waits for (and cancels after
    /// its limit): for work that waits on the relay and is no job's (a publish of what waited at a
    /// start or for the relay's return), so a relay that is slow or cannot be written holds back only
    /// it, never the account's jobs nor another account's work.
    func outsideLine(_ account: AccountID, _ body: @escaping @Sendable () async -> Void) {
        track {
            await body()
            self.forgetIfIdle(account)
        }
    }

    /// The most records one write outside the line carries (the relay service takes up to 1,000).
    static let outgoingBatch = 100

    /// Runs `body` as a follow-up with an owner: `finishFollowUps` waits for it at a stop.
    private func track(_ body: @escaping @Sendable () async -> Void) {
        // Made and recorded under one lock: the task, which removes itself under it, cannot end before it is recorded.
        followUps.withLock { followUps in
            followUps.next += 1
            let id = followUps.next
            // Detached: a task-local "running" from the enqueuing job must not let it run inline.
            followUps.running[id] = Task.detached {
                await body()
                self.followUps.withLock { _ = $0.running.removeValue(forKey: id) }
            }
        }
    }

    /// The follow-ups queued and not ended yet.
    var followUpsRunning: Int { followUps.withLock { $0.running.count } }

    /// Waits for every follow-up queued so far to end, cancelling those still running after
    /// `limit` (a publish to a relay that does not answer): what they owed is in the vault,
    /// and the next start resumes it. A stopping daemon calls it before it shuts its relay down.
    func finishFollowUps(within limit: Duration) async {
        let end = ContinuousClock.now + limit
        // Again until none is left: a follow-up may queue another.
        while case let running = followUps.withLock({ Array($0.running.values) }), !running.isEmpty {
            let deadline = Task {
                try? await Task.sleep(until: end, clock: .continuous)
                if !Task.isCancelled { for task in running { task.cancel() } }
            }
            for task in running { await task.value }
            deadline.cancel()
        }
    }

    /// Forgets the owner of an account this device does not hold once nothing needs it.
    func forgetIfIdle(_ account: AccountID) {
        owners.withLock { owners in
            guard let owner = owners[account], owner.isIdle else { return }
            owners[account] = nil
        }
    }

    /// Runs `body` on the account's owner (made if needed) under the directory's lock, for
    /// what registers on it from outside a job (an event stream): it cannot be forgotten meanwhile.
    func withOwner<T>(_ account: AccountID, _ body: (AccountOwner) -> T) -> T {
        owners.withLock { owners in
            let owner = owners[account] ?? AccountOwner(account)
            owners[account] = owner
            return body(owner)
        }
    }

    /// Keeps `identity` as the one prepared for the account's sign-in (in its job), forgetting
    /// the oldest other prepared identity past `preparedIdentityLimit`.
    func prepare(_ account: AccountID, _ identity: DeviceIdentity) {
        owner(account).preparedIdentity.withLock { $0 = identity }
        let evicted = prepared.withLock { order -> AccountID? in
            order.removeAll { $0 == account }
            order.append(account)
            return order.count > Self.preparedIdentityLimit ? order.removeFirst() : nil
        }
        if let evicted {
            existing(evicted)?.preparedIdentity.withLock { $0 = nil }
            forgetIfIdle(evicted)
        }
    }

    /// Takes the account's prepared identity, if any.
    func takePrepared(_ account: AccountID) -> DeviceIdentity? {
        prepared.withLock { $0.removeAll { $0 == account } }
        return existing(account)?.preparedIdentity.withLock { prepared in
            defer { prepared = nil }
            return prepared
        }
    }

    /// How many owners the directory holds (accounts, and names something still needs).
    var count: Int { owners.withLock { $0.count } }

    /// Records handed to the relay outside the lines and not yet written (`sendOutsideLine`).
    var recordsSending: Int {
        owners.withLock { Array($0.values) }.reduce(0) { $0 + $1.outgoing.withLock(\.count) }
    }

    /// Jobs running or waiting in every line, and in the longest; and relay publishes of log entries
    /// and shares under way or waiting their turn (`publishTurn`), in a job or outside the lines.
    var lineDepths: (queued: Int, deepest: Int, publishing: Int) {
        owners.withLock { Array($0.values) }.reduce((0, 0, 0)) { total, owner in
            let depth = owner.inbox.depth
            return (total.0 + depth, max(total.1, depth), total.2 + owner.publishTurn.depth)
        }
    }

    /// Waits for the account's publish turn (`AccountOwner.publishTurn`), its place taken under the
    /// directory's lock as a job's is; `endPublishTurn` gives it back.
    func publishTurn(_ account: AccountID) async -> (AccountOwner, UInt64) {
        let (owner, ticket) = withOwner(account) { ($0, $0.publishTurn.take()) }
        await owner.publishTurn.wait(for: ticket)
        return (owner, ticket)
    }

    func endPublishTurn(_ account: AccountID, _ owner: AccountOwner, _ ticket: UInt64) {
        owner.publishTurn.finish(ticket)
        forgetIfIdle(account)
    }
}

/// One account's owner: its line of jobs, the state they last published, the
/// reads and streams waiting on it, and an identity made before sign-in.
package final class AccountOwner: Sendable {
    package let id: AccountID
    /// The account's jobs, run in order by one task (`AccountOwners.post`).
    let inbox = JobInbox()
    /// Passphrase checks (unlocks, passphrase changes), one at a time and outside the line
    /// of jobs: each sees the back-off the one before it left, whatever the jobs wait on.
    let passphraseChecks = JobQueue()
    let waiters = AccountWaiters()
    let pairings = AccountPairings()
    let timers = AccountTimers()
    /// Records on their way to the relay outside the line (`AccountOwners.sendOutsideLine`).
    let outgoing = Mutex<Outgoing>(Outgoing())
    /// The account's relay publishes of log entries and shares, one at a time: a job's
    /// (`Publishing.publishQueued`) and one after a job, outside the line
    /// (`Publishing.publishOutsideLine`). A turn held outside the line never waits for the line.
    let publishTurn = JobQueue()
    /// What follows each unlock (the log read again, the kept shares taken, owed work), in
    /// order, outside the line: the calls that read the keys held and the log wait for the
    /// ones before them (`AccountOwners.caughtUp`), as they waited in line behind its job before.
    let catchUps = JobQueue()
    /// A publish of what waited (`Publishing.publishAllQueued`, at a start or on the relay's return) is
    /// under way: another is not started beside it, so a relay that fails and answers again and again
    /// (a held file: every write fails, every read answers) does not pile them up.
    let publishingWhatWaited = Mutex(false)
    /// A publish outside the line the relay took, not yet recorded in the vault: the next job
    /// that publishes records it first (`Publishing.recordWritten`), before anything is read to send.
    let written = Mutex<WrittenBatch?>(nil)
    struct WrittenBatch: Sendable {
        /// The log entries the relay holds now: this device's log confirmed through this count.
        var through: Int
        var settled: [OwedDelivery]
        /// Outbox rows (pairing approvals) that rode with the entries.
        var riders: [Int64]
    }
    private let published = Mutex<Published>(Published())
    private struct Published {
        var state: AccountState?
        /// Locks made at once, outside the line (`lockAtOnce`).
        var locksAtOnce: UInt64 = 0
        /// The count of locks an unlock made at once came after (`unlockAtOnce`): a job that
        /// began before those locks publishes into the state that unlock made, unlocked.
        var unlockedAfter: UInt64 = 0
        /// Counts every publish: a read woken with the state of one answers from it only while
        /// no other has come since (`AccountOwner.current`, `isCurrent`).
        var version: UInt64 = 0

        /// A lock came after the job that began at `locksAtStart`, and no unlock after it.
        func lockedSince(_ locksAtStart: UInt64) -> Bool { locksAtOnce != locksAtStart && unlockedAfter != locksAtOnce }
    }
    /// Records handed to the relay outside the line and not yet taken by a write, and
    /// whether a write is under way (its task takes what is handed meanwhile).
    struct Outgoing {
        private(set) var waiting: [OwedRecord] = []
        private(set) var sending = false
        /// The records of the write under way (`next` sets it, `finished` clears it).
        private(set) var inFlight = 0
        /// The outbox rows handed and not yet written: handed again (a publish reads the outbox), they are not taken twice.
        private var handedRows: Set<Int64> = []

        /// Handed and not yet written or queued in the vault.
        var count: Int { waiting.count + inFlight }

        /// Adds `records` (but outbox rows it holds already); answers whether a task must start to send them.
        mutating func hand(_ records: [OwedRecord]) -> Bool {
            let new = records.filter { $0.outboxID.map { handedRows.insert($0).inserted } ?? true }
            guard !new.isEmpty else { return false }
            waiting += new
            defer { sending = true }
            return !sending
        }

        /// The write of `batch` is over (taken by the relay, or left in the outbox for the next publish).
        mutating func finished(_ batch: [OwedRecord]) {
            for record in batch { if let row = record.outboxID { handedRows.remove(row) } }
            inFlight = 0
        }

        /// The next write's records, oldest first; nil when none waits, and the task ends.
        mutating func next(atMost limit: Int) -> [OwedRecord]? {
            guard !waiting.isEmpty else {
                sending = false
                return nil
            }
            let batch = Array(waiting.prefix(limit))
            waiting.removeFirst(batch.count)
            inFlight = batch.count
            return batch
        }
    }

    /// An identity made for the account before the person signed in (`identityNonce`),
    /// taken by the creation or enrollment that follows. Memory only.
    let preparedIdentity = Mutex<DeviceIdentity?>(nil)

    init(_ id: AccountID) {
        self.id = id
    }

    var state: AccountState? { published.withLock { $0.state } }
    /// The state published now, and its publish's number.
    var current: AccountWaiters.Wake? {
        published.withLock { published in published.state.map { AccountWaiters.Wake(state: $0, version: published.version) } }
    }
    /// Whether nothing was published since the publish numbered `version`.
    func isCurrent(_ version: UInt64) -> Bool { published.withLock { $0.version == version } }
    var isHeld: Bool { published.withLock { $0.state != nil } }

    /// Hands `apply` the state published now, and again while another publish came between
    /// that read and `apply`'s end, so that of calls made at once on several threads the last
    /// to end leaves the latest state applied: a lock's `apply(locked)` cannot be overwritten
    /// by a job's earlier read (a relay signer keeping a locked account's signing key).
    /// After `optimisticTries` rounds (a caller locking again and again) `apply` runs under the lock,
    /// where nothing can publish past it, so no stream of publishes keeps it going.
    func keepInStep(_ apply: (AccountState?) -> Void) {
        optimistically({ state, version in
            apply(state)
            return isCurrent(version) ? () : nil
        }, else: { apply($0.state) })
    }

    /// What `keepInStep` and `publish` share: `attempt` works from the state published now and
    /// its publish's number, outside the lock, and answers nil if another publish came meanwhile,
    /// then runs again on what that left. After `optimisticTries` rounds `underLock` runs under
    /// the lock, where nothing can publish past it, so no stream of publishes keeps it going.
    private func optimistically<R>(_ attempt: (AccountState?, UInt64) throws -> R?,
                                   else underLock: (inout Published) throws -> R) rethrows -> R {
        for _ in 0..<Self.optimisticTries {
            let (state, version) = published.withLock { ($0.state, $0.version) }
            if let answer = try attempt(state, version) { return answer }
        }
        return try published.withLock { try underLock(&$0) }
    }
    var locksAtOnce: UInt64 { published.withLock { $0.locksAtOnce } }

    /// Nothing needs this owner: no account is held, and no job, record being sent, waiter,
    /// listener, exchange, timer or prepared identity is on it.
    var isIdle: Bool {
        !isHeld && inbox.isIdle && passphraseChecks.isIdle && publishTurn.isIdle && catchUps.isIdle && outgoing.withLock({ !$0.sending }) && waiters.isIdle && pairings.isEmpty && timers.isEmpty && preparedIdentity.withLock { $0 == nil }
    }

    /// Applies `body` to a copy taken under the lock (the state's storage is
    /// shared, not copied), so no reader holds the lock while it works.
    package func read<T>(_ body: (AccountState) throws -> T) rethrows -> T? {
        try state.map(body)
    }

    /// Publishes what a job of this account leaves (nil: the account is gone);
    /// answers the state it replaced, the state published, and what `change` answered.
    /// Only `KeyVaultService.update` and `install` call it.
    ///
    /// `change` runs on a copy of the state published now, outside the lock: the lock is
    /// held only to swap the result in, so no reader ever waits on a step of the machine
    /// (an append that copies a long log, say). The account's jobs take turns, so the only
    /// other writers are a lock, an unlock or a back-off made at once: if one published
    /// meanwhile, `change` runs again on what it left (a step is a pure function of the
    /// state and the time), and the first answer is dropped. After `optimisticTries` such
    /// turns (a caller locking again and again) it runs under the lock, as a lock's does, so
    /// no stream of locks can hold a job back for ever.
    ///
    /// A job that began before a lock made at once (`locksAtStart` behind the count) may
    /// still be working from the unlocked state it read: whatever it publishes is locked
    /// again here, so no key or KEK it held comes back into memory after that lock.
    ///
    /// A step `planned` on the state published as its `version` (`KeyVaultService.perform`, which
    /// stepped a copy to learn the vault's writes) is swapped in as it is if nothing was published
    /// since, so the machine steps once; otherwise `change` steps again on what was.
    func publish<T>(locksAtStart: UInt64, now: Date, planned: Planned<T>? = nil, _ change: (inout AccountState?) throws -> T) rethrows
        -> (before: AccountState?, after: AccountState?, answer: T) {
        try optimistically({ before, version in
            var next = before
            let answer: T
            if let planned, planned.version == version {
                next = planned.state
                answer = planned.answer
            } else {
                answer = try change(&next)
            }
            let swapped = published.withLock { published -> AccountState?? in
                guard published.version == version else { return nil }
                published.state = next
                Self.relockIfLockedSince(locksAtStart, &published, now: now)
                return .some(published.state)
            }
            // `before` is released here, outside the lock, if it was the last reference to the old state.
            return swapped.map { (before, $0, answer) }
        }, else: { published in
            let before = published.state
            let answer = try change(&published.state)
            Self.relockIfLockedSince(locksAtStart, &published, now: now)
            return (before, published.state, answer)
        })
    }

    /// A step of the machine made on a copy of the state published as `version`, and what it answered.
    struct Planned<T> {
        let version: UInt64
        let state: AccountState?
        let answer: T
    }

    /// How many times a job's step runs outside the lock before it runs under it (`publish`).
    static let optimisticTries = 3

    /// Ends a publish: locked again if a lock made at once came after the job began, and counted.
    private static func relockIfLockedSince(_ locksAtStart: UInt64, _ published: inout Published, now: Date) {
        if published.lockedSince(locksAtStart) { published.state?.handle(.lock, now: now) }
        published.version += 1
    }

    /// Locks the account now, outside its line of jobs, whatever they are waiting on (a
    /// relay, a vault): the KEK, the identity and (for `whenUnlocked`) the keys leave memory
    /// here; a job already running cannot put them back (`publish`). Answers the lock's
    /// effects, or nil for an account this device does not hold.
    func lockAtOnce(now: Date) -> (before: AccountState, after: AccountState, effects: [Locking.Effect])? {
        atOnce { state, published in
            let effects = state.handle(.lock, now: now).locking
            published.locksAtOnce += 1
            return effects
        }
    }

    /// Unlocks the account now, outside its line of jobs (issue 34): `unlock` installs the KEK
    /// and the secrets into the state held now, whatever a job published while the KDF ran.
    /// A lock made at once since `locksBefore` (sent while this unlock was under way) wins:
    /// nothing changes and `lockedMeanwhile` is thrown. nil for an account this device does not hold.
    func unlockAtOnce(locksBefore: UInt64, _ unlock: (inout AccountState) throws -> [Locking.Effect]) throws
        -> (before: AccountState, after: AccountState, effects: [Locking.Effect])? {
        try atOnce { state, published in
            guard published.locksAtOnce == locksBefore else { throw Self.lockedMeanwhile(id) }
            let effects = try unlock(&state)
            published.unlockedAfter = published.locksAtOnce
            return effects
        }
    }

    static func lockedMeanwhile(_ id: AccountID) -> Refusal {
        Refusal(.locked, "the account \(id) was locked while this unlock was under way, and stays locked; unlock it again")
    }

    /// A change to the state now, outside the line of jobs, for what must not wait on them (a
    /// wrong passphrase's back-off, decided from the back-off held now). nil for an account not held.
    func changeAtOnce<T>(_ change: (inout AccountState) throws -> T) rethrows -> (before: AccountState, after: AccountState, effects: T)? {
        try atOnce { state, _ in try change(&state) }
    }

    /// `change` applied under the account's own lock to the state held now, which it publishes
    /// if `change` returns (a throw changes nothing); `change` may also count what it did in
    /// `Published`. nil for an account this device does not hold.
    private func atOnce<T>(_ change: (inout AccountState, inout Published) throws -> T) rethrows
        -> (before: AccountState, after: AccountState, effects: T)? {
        try published.withLock { published in
            guard var state = published.state else { return nil }
            let before = state
            let effects = try change(&state, &published)
            published.state = state
            published.version += 1
            return (before, state, effects)
        }
    }
}
