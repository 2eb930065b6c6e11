import Foundation
import KeyVaultProtocol
import KeyVaultRelay
import Synchronization

/// Held reads, by account. A read takes a `mark` before it reads the store;
/// if it found nothing it waits until a wake-up for its account comes after
/// that mark (so a record landing between the read and the wait is not
/// missed), or until its deadline. Wake-ups for other accounts cost it nothing.
/// How many wait, and how long each took to wake after the change was known, are in the metrics.
///
/// A write on this instance wakes its account's reads with the rows it stored
/// (`Wake.stored`), from which a read that had read everything before them answers
/// without asking the store again; any other wake-up says only that something may
/// have landed.
///
/// A store's wake-up that says through which cursor its commit stored (`RelayWake.landed`,
/// another instance's write or the echo of this one's) wakes only the reads that had not
/// read that far: the echo of a write whose rows a read already answered costs it nothing.
final class Waiters: Sendable {
    /// What ended a wait.
    enum Wake: Sendable {
        /// A write on this instance stored these rows (and every row of the account up to their `after` was there before them).
        case stored(StoredBatch)
        /// Anything else: a wake-up from the store (another instance's write), a drain, the deadline, a mark already passed.
        case other
    }

    struct Mark: Sendable, Equatable {
        var epoch: UInt64
        var generation: UInt64
        /// Wake-ups of the account that said through which cursor (`landed`).
        var landed: UInt64
    }

    /// The wake-up counts of the accounts that share it (`State.slots`): wake-ups of every
    /// account, and `landed` ones, with the highest cursor one named.
    private struct Slot {
        var generation: UInt64 = 0
        var landed: UInt64 = 0
        var through = RelayCursor.start
    }

    private struct Waiting {
        let continuation: CheckedContinuation<Wake, Never>
        /// What the read has read through: a `landed` wake-up at or before it does not concern it.
        let readThrough: RelayCursor
    }

    private struct State {
        /// Bumped by a wake-up of every account (`any`, `opened`) and by draining.
        var epoch: UInt64 = 0
        /// The counts a read compares across its mark and its hold, in a fixed number of slots
        /// shared by the accounts that hash to them, so the relay keeps nothing per account ever
        /// written: another account's wake-up in a read's slot is one more read of the store for
        /// it, never a wake-up missed. The hash is seeded per process: no one outside picks whom
        /// an account shares with.
        var slots = [Slot](repeating: Slot(), count: Waiters.slotCount)
        var waiting: [AccountID: [UInt64: Waiting]] = [:]
        /// Waits not yet registered, and those among them cancelled before they were.
        var pending: Set<UInt64> = []
        var cancelled: Set<UInt64> = []
        var nextID: UInt64 = 0
        var draining = false

        static func slot(of account: AccountID) -> Int {
            Int(UInt(bitPattern: account.hashValue) % UInt(Waiters.slotCount))
        }

        func mark(_ account: AccountID) -> Mark {
            let slot = slots[Self.slot(of: account)]
            return Mark(epoch: epoch, generation: slot.generation, landed: slot.landed)
        }

        /// Whether a wake-up since `mark` concerns a read that saw every row through `readThrough`: any
        /// wake-up but a `landed` one does; a `landed` one does if it may have named a later cursor.
        func changed(_ account: AccountID, since mark: Mark, readThrough: RelayCursor) -> Bool {
            let now = self.mark(account)
            if now.epoch != mark.epoch || now.generation != mark.generation { return true }
            return now.landed != mark.landed && slots[Self.slot(of: account)].through > readThrough
        }
    }

    private let state = Mutex(State())
    /// The slots of wake-up counts (`State.slots`), whatever the number of accounts.
    static let slotCount = 4096
    private let metrics: RelayMetrics
    /// Held reads per account now: an account's authenticated reads, whatever their addresses,
    /// hold at most `perAccount` waits at once (issue 33, item 6).
    private let holding = Mutex([AccountID: Int]())
    let perAccount: Int

    init(metrics: RelayMetrics, perAccount: Int = 32) {
        self.metrics = metrics
        self.perAccount = perAccount
    }

    /// One of the account's held reads: false when it holds `perAccount` already (the read then answers at once).
    func hold(_ account: AccountID) -> Bool {
        holding.withLock { holding in
            guard holding[account, default: 0] < perAccount else { return false }
            holding[account, default: 0] += 1
            return true
        }
    }

    func release(_ account: AccountID) {
        holding.withLock { holding in
            let left = holding[account, default: 1] - 1
            holding[account] = left > 0 ? left : nil
        }
    }

    func mark(_ account: AccountID) -> Mark { state.withLock { $0.mark(account) } }

    var isDraining: Bool { state.withLock { $0.draining } }

    /// The account's held reads now.
    func waiting(_ account: AccountID) -> Int { state.withLock { $0.waiting[account]?.count ?? 0 } }

    /// Records of these accounts landed.
    /// The one place held reads are woken: the store changed, by a publish on this
    /// instance or as the store's wake-up says (which covers other instances').
    /// `path` and `known`: how and when this instance learned of it (the push latency counts from there).
    func storeChanged(_ change: RelayWake, path: RelayMetrics.PushPath, known: ContinuousClock.Instant = .now) {
        let woken: Int
        switch change {
        case .accounts(let accounts): woken = wake(accounts)
        case .landed(let account, let through): woken = wake(account, through: through)
        case .any, .opened: woken = wakeAll()
        }
        let latency = ContinuousClock.now - known
        for _ in 0..<woken { metrics.pushed(path, after: latency) }
        // Counted once the reads it concerns are woken: a scrape that sees it sees them woken.
        if path == .store { metrics.storeWakeups.increment() }
    }

    /// A write on this instance stored `batch` (committed): its account's held reads wake with its rows.
    func stored(_ batch: StoredBatch, path: RelayMetrics.PushPath, known: ContinuousClock.Instant = .now) {
        let woken = wake([batch.account], with: .stored(batch))
        let latency = ContinuousClock.now - known
        for _ in 0..<woken { metrics.pushed(path, after: latency) }
    }

    /// Graceful shutdown: every held read answers now, and none waits after. Returns how many it woke.
    @discardableResult
    func drain() -> Int { wakeAll(draining: true) }

    /// Returns how many held reads it woke.
    @discardableResult
    private func wake(_ accounts: Set<AccountID>, with wake: Wake = .other) -> Int {
        let resumed = state.withLock { state -> [CheckedContinuation<Wake, Never>] in
            var out: [CheckedContinuation<Wake, Never>] = []
            for account in accounts {
                state.slots[State.slot(of: account)].generation &+= 1
                if let waiting = state.waiting.removeValue(forKey: account) { out += waiting.values.map(\.continuation) }
            }
            return out
        }
        resumed.forEach { $0.resume(returning: wake) }
        return resumed.count
    }

    /// The account's commit stored rows through `through`: the reads that had not read that far wake.
    private func wake(_ account: AccountID, through: RelayCursor) -> Int {
        let resumed = state.withLock { state -> [CheckedContinuation<Wake, Never>] in
            let slot = State.slot(of: account)
            state.slots[slot].landed &+= 1
            state.slots[slot].through = max(state.slots[slot].through, through)
            // The echo of a write its reads answered from concerns none of them: nothing is copied.
            guard let waiting = state.waiting[account], waiting.values.contains(where: { $0.readThrough < through }) else { return [] }
            var concerned: [CheckedContinuation<Wake, Never>] = []
            var left: [UInt64: Waiting] = [:]
            for (id, read) in waiting {
                if read.readThrough < through { concerned.append(read.continuation) } else { left[id] = read }
            }
            state.waiting[account] = left.isEmpty ? nil : left
            return concerned
        }
        resumed.forEach { $0.resume(returning: .other) }
        return resumed.count
    }

    /// Anything may have landed (or the server stops): every held read answers. Returns how many it woke.
    @discardableResult
    private func wakeAll(draining: Bool = false) -> Int {
        let resumed = state.withLock { state -> [CheckedContinuation<Wake, Never>] in
            state.epoch += 1
            if draining { state.draining = true }
            let out = state.waiting.values.flatMap { $0.values.map(\.continuation) }
            state.waiting = [:]
            return out
        }
        resumed.forEach { $0.resume(returning: .other) }
        return resumed.count
    }

    /// Returns when a wake-up for `account` that concerns a read that saw every row through `readThrough`
    /// came after `mark` (what it was), at `deadline`, or when the task is cancelled.
    func wait(_ account: AccountID, after mark: Mark, readThrough: RelayCursor, until deadline: ContinuousClock.Instant) async -> Wake {
        await withTaskGroup(of: Wake.self) { group in
            group.addTask { await self.signal(account, after: mark, readThrough: readThrough) }
            group.addTask {
                try? await Task.sleep(until: deadline, clock: .continuous)
                return .other
            }
            let wake = await group.next() ?? .other
            group.cancelAll()
            return wake
        }
    }

    private func signal(_ account: AccountID, after mark: Mark, readThrough: RelayCursor) async -> Wake {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            state.pending.insert(state.nextID)
            return state.nextID
        }
        // Counted as held once it can be woken (a wake-up now reaches it), until it is.
        var held = false
        defer { if held { metrics.heldReads.decrement() } }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Wake, Never>) in
                let now = state.withLock { state -> Bool in
                    state.pending.remove(id)
                    if state.cancelled.remove(id) != nil || state.draining || state.changed(account, since: mark, readThrough: readThrough) {
                        return true
                    }
                    state.waiting[account, default: [:]][id] = Waiting(continuation: continuation, readThrough: readThrough)
                    metrics.heldReads.increment()
                    return false
                }
                held = !now
                if now { continuation.resume(returning: .other) }
            }
        } onCancel: {
            let continuation = state.withLock { state -> CheckedContinuation<Wake, Never>? in
                if let waiting = state.waiting[account]?.removeValue(forKey: id) {
                    if state.waiting[account]?.isEmpty == true { state.waiting[account] = nil }
                    return waiting.continuation
                }
                if state.pending.contains(id) { state.cancelled.insert(id) }
                return nil
            }
            continuation?.resume(returning: .other)
        }
    }
}
