import Foundation
import Logging
import ServiceLifecycle
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultStore

/// Propagation: reading the relay, verifying what it holds, taking in shares
/// and acknowledging them. The relay is untrusted: every record is verified
/// before it changes anything, and a refused one is logged and ignored.
extension KeyVaultService {
    /// Runs until cancelled. At start, each account's view is rebuilt from what
    /// the vault kept of the relay (`relay_notes`), and then only what is new
    /// after the account's own cursor is read; then one pass per wake-up that
    /// concerns one of this device's accounts.
    public func propagate() async {
        guard let relay else { return }
        let wakeups = relay.wakeups()
        for account in accountIDs { await replayNotes(account) }
        await syncAll()
        // Reads that waited for this first pass decide again (the generation they ask for may be known now).
        for account in accountIDs { hub.wake(account, nil) }
        // What waited in the vault when the daemon stopped goes out now (and, later,
        // whenever the relay answers again after failing: `noteRelay`).
        await publishAllQueued()
        resumePromotionDeadlines()
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await wake in wakeups.cancelOnGracefulShutdown() {
                    if wake == .opened { await self.auditRelay() }
                    for account in self.accountIDs where wake.concerns(account) { await self.sync(account) }
                }
            }
            group.addTask { await self.retryWhileUnreachable() }
            await group.next()
            group.cancelAll()
        }
    }

    /// While the relay is unreachable, reads it again with back-off (250 ms
    /// doubling to 5 s); the first answer publishes what waits (`noteRelay`).
    /// While it answers, only an in-memory flag is looked at; the relay's own
    /// wake-ups drive the rest.
    private func retryWhileUnreachable() async {
        var delay = 0.25
        while !Task.isCancelled {
            guard relayHealth.withLock({ $0.unreachableSince != nil }) || relay?.unreachableSince != nil else {
                delay = 0.25
                try? await Task.sleep(for: .milliseconds(200))
                continue
            }
            try? await Task.sleep(for: .seconds(delay))
            delay = min(delay * 2, 5)
            await syncAll()
        }
    }

    /// How many rows of an account may be read past the cursor the vault holds.
    static let cursorWriteInterval = 256

    var accountIDs: [AccountID] { accounts.withLock { Array($0.keys) }.sorted() }

    func syncAll() async {
        for account in accountIDs { await sync(account) }
    }

    /// One pass over what is new on the relay for one account, after its own
    /// cursor: one of the account's jobs. Each page is processed
    /// (what it changes is stored), then the cursor moves on with the records
    /// kept for the next start, in one vault transaction: a crash between the
    /// two reads the page again, and reading a record twice changes nothing.
    func sync(_ account: AccountID) async {
        guard let relay else { return }
        do {
            try await owners.run(account) {
                while true {
                    guard let cursor = accounts.withLock({ $0[account]?.relayCursor }) else { return }
                    let rows = try await relay.rows(account: account, after: cursor, limit: 500)
                    guard let last = rows.last else { break }
                    var kept: [RelayNote] = []
                    for row in rows {
                        let seenAt = now()
                        if let kind = await process(row, seenAt: seenAt) {
                            kept.append(RelayNote(cursor: row.cursor, kind: kind, body: row.record.body, seenAt: seenAt))
                        }
                    }
                    // The cursor is kept in the vault with every record kept, and at least every
                    // `cursorWriteInterval` rows otherwise: reading a record twice changes nothing, so a
                    // restart may read a few again rather than every pass paying for a vault write.
                    let unstored = (accounts.withLock { $0[account]?.rowsSinceStoredCursor } ?? 0) + rows.count
                    let store = !kept.isEmpty || unstored >= Self.cursorWriteInterval
                    if store { try await vault.advanceRelayCursor(account: account, to: last.cursor, keep: kept) }
                    update(account) { state in
                        state.relayCursor = max(state.relayCursor, last.cursor)
                        state.rowsSinceStoredCursor = store ? 0 : unstored
                    }
                }
                noteRelay(nil)
                await advanceEnrollments(account)
            }
        } catch let error as RelayError {
            noteRelay(error)
        } catch {
            logger.error("relay pass failed", metadata: ["account": "\(account)", "problem": "\(error)"])
        }
    }

    /// At start: the relay records this device kept for the account, replayed in
    /// order, so requests, challenges, reveals, acknowledgements and shares that
    /// wait for an unlock are known again without reading the relay.
    func replayNotes(_ account: AccountID) async {
        await owners.run(account) {
            let notes = update(account) { state -> [RelayNote] in
                defer { state.notesToReplay = [] }
                return state.notesToReplay
            } ?? []
            let me = accounts.withLock { $0[account]?.deviceID }
            // What belongs to requests that have expired is of no use any more: forgotten, not replayed.
            let lifetime = Double(policy.current.enrollment.requestLifetimeSeconds)
            let stale = notes.filter { [.request, .challenge, .reveal].contains($0.kind) && now().timeIntervalSince($0.seenAt) >= lifetime }
            if !stale.isEmpty {
                do { try await vault.dropRelayNotes(account: account, cursors: stale.map(\.cursor)) } catch {
                    logger.error("could not forget expired enrollment records", metadata: ["account": "\(account)", "problem": "\(error)"])
                }
            }
            let staleCursors = Set(stale.map(\.cursor))
            for note in notes where !staleCursors.contains(note.cursor) {
                let record = RelayRecord(kind: note.kind, account: account, recipient: note.kind == .share ? me : nil, logSeq: nil, body: note.body)
                _ = await process(RelayRow(cursor: note.cursor, record: record), seenAt: note.seenAt)
            }
        }
    }

    /// Verifies one record and takes in what it says. Answers the kind to keep
    /// in the vault for the next start (nil: nothing to keep, or refused).
    private func process(_ row: RelayRow, seenAt: Date) async -> RelayRecord.Kind? {
        let account = row.record.account
        guard accounts.withLock({ $0[account] != nil }) else { return nil }
        do {
            switch row.record.kind {
            case .log:
                try await adopt([try LogEntry.decode(row.record.body)], account: account)
                return nil
            case .request:
                let request = try EnrollmentRequest.decode(row.record.body)
                guard request.account == account else { throw ProtocolError.invalid("a request filed under another account") }
                let kept = update(account) { state in
                    state.enrollment.requestArrived(request, circle: state.circle, me: state.deviceID, at: seenAt)
                } ?? false
                return kept ? .request : nil
            case .challenge:
                try noteChallenge(row.record.body, account: account)
                return .challenge
            case .reveal:
                return try noteReveal(row.record.body, account: account) ? .reveal : nil
            case .share:
                guard row.record.recipient == accounts.withLock({ $0[account]?.deviceID }) else { return nil }
                // Locked: kept sealed for the unlock (the vault keeps it; the relay is not read again).
                let locked = update(account) { state -> Bool in
                    guard state.identity == nil else { return false }
                    state.keptShares[row.cursor] = row.record.body
                    return true
                } ?? false
                if locked { return .share }
                try await takeShare(row.record.body, account: account)
                return nil
            case .ack:
                let ack = try ShareAck.decode(row.record.body)
                guard let state = accounts.withLock({ $0[account] }) else { return nil }
                var promotions = state.promotions
                let effects = try promotions.acknowledged(ack, circle: state.circle, me: state.deviceID, at: now())
                update(account) { $0.promotions = promotions }
                hub.wake(account, nil)
                // The account's next job, after this pass: promoting appends to the log, and may need a pass of its own.
                if !effects.isEmpty { owners.enqueue(account) { await self.promoteDue(account) } }
                return .ack
            }
        } catch {
            logger.warning("refused relay record", metadata: [
                "account": "\(account)", "kind": "\(row.record.kind.rawValue)", "cursor": "\(row.cursor)", "problem": "\(error)",
            ])
            return nil
        }
    }

    /// A trusted device's challenge: the new device picks the first valid one
    /// for its request (and so its code); a trusted device remembers them all.
    private func noteChallenge(_ body: [UInt8], account: AccountID) throws {
        try update(account) { state in
            _ = try state.enrollment.challengeArrived(body, circle: state.circle, me: state.deviceID)
        }
        hub.wake(account, nil)
    }

    /// The new device's reveal, checked against its request's commitment.
    /// Answers whether it answers a request this device holds.
    private func noteReveal(_ body: [UInt8], account: AccountID) throws -> Bool {
        try update(account) { try $0.enrollment.revealArrived(body) } ?? false
    }

    /// Publishes what this device owes an enrollment: a challenge for every
    /// live request it has not answered (trusted, unlocked), or its reveal, once
    /// (new device, unlocked). Junk requests cannot starve a genuine one: each is
    /// answered, a challenge gives a relay nothing to guess with unless a person
    /// types a code for that very request, and requests expire or are dismissed.
    func advanceEnrollments(_ account: AccountID) async {
        await owners.run(account) { await advanceEnrollmentsInJob(account) }
    }

    private func advanceEnrollmentsInJob(_ account: AccountID) async {
        let lifetime = Double(policy.current.enrollment.requestLifetimeSeconds)
        guard relay != nil, let state = accounts.withLock({ $0[account] }), let identity = state.identity else { return }
        let owed = state.enrollment.owed(at: now(), lifetime: lifetime, circle: state.circle, me: state.deviceID)
        guard !owed.isEmpty else { return }
        let records: [RelayRecord] = owed.map { item in
            switch item {
            case .challenge(let request): return .challenge(.make(request: request, challenger: state.deviceID, signer: identity.signing))
            case .reveal(let request, let challenge, let secret): return .reveal(.make(request: request, challenge: challenge, secret: secret, signer: identity.signing))
            }
        }
        // Sent, or queued until the relay is back: either way this device has answered.
        await send(records, account: account)
        if owed.contains(where: { if case .reveal = $0 { return true } else { return false } }) {
            do { try await vault.markRevealed(account: account) } catch {
                logger.error("could not record that the reveal went out", metadata: ["account": "\(account)", "problem": "\(error)"])
            }
        }
        update(account) { $0.enrollment.sent(owed) }
    }

    /// Verifies log entries from the relay against the account's circle
    /// (`CircleSync`, pure), stores what it accepted, then publishes it and
    /// reacts to what the entries say about this device.
    func adopt(_ entries: [LogEntry], account: AccountID) async throws {
        try await owners.run(account) {
            guard let state = accounts.withLock({ $0[account] }) else { return }
            let outcome = try CircleSync.adopt(entries, into: state.circle, confirmed: state.logConfirmed, me: state.deviceID, signer: state.identity?.signing)
            guard !outcome.isEmpty || outcome.confirmed != state.logConfirmed else { return }
            let circle = outcome.circle, confirmed = outcome.confirmed
            let current = state.currentKey(after: circle)
            if let from = outcome.rewrittenFrom {
                try await vault.replaceLog(account: account, from: from, entries: circle.entries[Int(from)...].map { ($0.seq, $0.encoded) },
                                           confirmed: confirmed, current: current)
                logger.notice("rebased this device's queued entries after another device's", metadata: ["account": "\(account)", "seq": "\(from)"])
                for body in outcome.dropped {
                    logger.notice("a queued entry was done by another device meanwhile", metadata: ["account": "\(account)", "kind": "\(body.kind)"])
                }
            } else {
                try await vault.appendLog(account: account, entries: outcome.accepted.map { ($0.seq, $0.encoded) }, confirmed: confirmed, current: current)
            }
            update(account) { state in
                state.setCircle(circle)
                state.logConfirmed = confirmed
            }
            if outcome.destroyed { try await shred(account) }
            for event in outcome.events { hub.wake(account, event) }
            // Waiting reads decide again: what they ask for may be known now (an approval and a rebase are accepted entries too).
            if !outcome.accepted.isEmpty { hub.wake(account, nil) }
            if outcome.joined { logger.notice("this device was approved", metadata: ["account": "\(account)"]) }
        }
    }

    /// The circle destroyed the account: drop every key here, in the vault and in memory.
    func shred(_ account: AccountID) async throws {
        try await vault.destroyKeys(account: account)
        update(account) { state in
            state.keys = [:]
            state.owedDeliveries = []
            state.promotions.shredded()
            state.items.removeAll { $0.attributes.kind == .generationKey }
            for i in state.generations.indices { state.generations[i].state = .destroyed }
        }
        logger.notice("account destroyed everywhere: keys shredded", metadata: ["account": "\(account)"])
        hub.wake(account, AccountEvent(name: "destroyed", fields: [:]))
    }

    /// Re-reads the account's log from the relay (after an unlock: an entry refused
    /// while locked, because it needed a rebase, is adopted now).
    func readLog(for account: AccountID) async {
        guard let relay else { return }
        do {
            // One entry at a time: a row that does not verify is refused alone, as in a pass.
            for row in try await relay.all(.log, account: account) {
                do { try await adopt([try LogEntry.decode(row.record.body)], account: account) } catch {
                    logger.warning("refused relay record", metadata: ["account": "\(account)", "kind": "log", "cursor": "\(row.cursor)", "problem": "\(error)"])
                }
            }
        } catch {
            logger.warning("relay log not read", metadata: ["account": "\(account)", "problem": "\(error)"])
        }
    }

    /// Takes in the shares that arrived while the account was locked (after an
    /// unlock), and forgets them once taken.
    func takeKeptShares(for account: AccountID) async {
        let kept = accounts.withLock { $0[account]?.keptShares ?? [:] }
        var done: [Int64] = []
        for (cursor, sealed) in kept.sorted(by: { $0.key < $1.key }) {
            guard accounts.withLock({ $0[account]?.identity != nil }) else { break }  // locked again meanwhile
            do { try await takeShare(sealed, account: account) } catch {
                logger.warning("refused relay record", metadata: ["account": "\(account)", "kind": "share", "cursor": "\(cursor)", "problem": "\(error)"])
            }
            done.append(cursor)
        }
        do { try await vault.dropRelayNotes(account: account, cursors: done) } catch {
            logger.error("could not forget taken shares", metadata: ["account": "\(account)", "problem": "\(error)"])
        }
        update(account) { state in for cursor in done { state.keptShares[cursor] = nil } }
    }

    /// Opens one share, checks it against the circle, stores the key wrapped
    /// under this device's KEK, and acknowledges it. A locked device leaves it sealed.
    func takeShare(_ sealed: [UInt8], account: AccountID) async throws {
        guard let state = accounts.withLock({ $0[account] }) else { return }
        guard let identity = state.identity, let kek = state.kek else { return }  // locked: taken in at unlock
        // Every rule of PROTOCOL.md "Key share", in the protocol layer (the vectors run the same code).
        let share = try KeyShare.accept(sealed, with: identity.box, as: state.deviceID, in: state.circle)
        let header = share.header
        if state.keys[header.keyID] != nil { return }  // already held
        let generation = KeyGeneration(number: header.generation, keyID: header.keyID, createdAt: header.createdAt, state: .active)
        try await storeKey(account, generation, key: share.key, kek: kek, accessibility: state.record.accessibility)
        update(account) { state in
            if state.circle.isTrusted(state.deviceID) { state.enrollment.joined() }
        }
        logger.notice("key received", metadata: ["account": "\(account)", "generation": "\(header.generation)", "from": "\(header.sender)"])
        hub.wake(account, .keyReady(header.generation, header.keyID))
        let ack = ShareAck.make(account: account, generation: header.generation, keyID: header.keyID, deviceID: state.deviceID, signer: identity.signing, at: now())
        await send([.ack(ack)], account: account)
    }
}
