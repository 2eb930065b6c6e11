import Foundation
import Logging
import ServiceLifecycle

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
                        if let kind = await process(row, seenAt: now()) {
                            kept.append(RelayNote(cursor: row.cursor, kind: kind, body: row.record.body, seenAt: now()))
                        }
                    }
                    try await vault.advanceRelayCursor(account: account, to: last.cursor, keep: kept)
                    update(account) { $0.relayCursor = max($0.relayCursor, last.cursor) }
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
            for note in notes {
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
                return update(account) { state -> RelayRecord.Kind? in
                    guard state.circle.isTrusted(state.deviceID), state.circle.members[request.device.deviceID] == nil,
                          state.circle.contains(hash: request.headHash) else { return nil }
                    let id = request.device.deviceID
                    state.requests[id] = request
                    state.requestSeen[id] = min(state.requestSeen[id] ?? seenAt, seenAt)
                    return .request
                } ?? nil
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
                try update(account) { state in
                    // A removed device's word no longer counts, not even for what it held.
                    guard let member = state.circle.members[ack.deviceID], !member.revoked, ack.account == account else {
                        throw ProtocolError.untrustedSigner(ack.deviceID)
                    }
                    guard ack.isSigned(by: member.keys.signing) else { throw ProtocolError.badSignature("an acknowledgement") }
                    var entry = state.acks[ack.deviceID] ?? (generations: [:], lastSeen: .distantPast)
                    let at = Date(timeIntervalSince1970: Double(ack.receivedAt) / 1000)
                    entry.generations[ack.keyID] = min(entry.generations[ack.keyID] ?? at, at)
                    entry.lastSeen = max(entry.lastSeen, at)
                    state.acks[ack.deviceID] = entry
                }
                hub.wake(account, nil)
                // The account's next job, after this pass: promoting appends to the log, and may need a pass of its own.
                owners.enqueue(account) { await self.promoteIfAcknowledged(account) }
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
            let challenge = try EnrollmentChallenge.accept(body, in: state.circle)
            state.challenges[Hex.encode(challenge.hash)] = challenge
            if challenge.challenger == state.deviceID { state.challenged.insert(Hex.encode(challenge.requestHash)) }
            if let request = state.enrollment, let secret = state.pairingSecret, state.chosenChallenge == nil, challenge.requestHash == request.hash {
                state.chosenChallenge = challenge
                state.pairingCode = PairingCode.derive(requestHash: request.hash, challenge: challenge.nonce, secret: secret)
            }
        }
        hub.wake(account, nil)
    }

    /// The new device's reveal, checked against its request's commitment.
    /// Answers whether it answers a request this device holds.
    private func noteReveal(_ body: [UInt8], account: AccountID) throws -> Bool {
        try update(account) { state in
            guard let hash = EnrollmentReveal.requestHash(of: body), let request = state.requests.values.first(where: { $0.hash == hash }) else { return false }
            let challenges = state.challenges
            let reveal = try EnrollmentReveal.accept(body, for: request) { challenges[Hex.encode($0)] != nil }
            state.reveals[request.device.deviceID] = reveal
            return true
        } ?? false
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
        let (records, challengedHashes, revealed) = accounts.withLock { states -> ([RelayRecord], [String], Bool) in
            guard let state = states[account], let identity = state.identity else { return ([], [], false) }
            var records: [RelayRecord] = []
            var hashes: [String] = []
            if state.circle.isTrusted(state.deviceID) {
                let unanswered = state.liveRequests(at: now(), lifetime: lifetime).filter { !state.challenged.contains(Hex.encode($0.hash)) }
                for request in unanswered {
                    records.append(.challenge(.make(request: request, challenger: state.deviceID, signer: identity.signing)))
                    hashes.append(Hex.encode(request.hash))
                }
            }
            var revealed = false
            if let request = state.enrollment, let challenge = state.chosenChallenge, let secret = state.pairingSecret, !state.revealed {
                records.append(.reveal(.make(request: request, challenge: challenge, secret: secret, signer: identity.signing)))
                revealed = true
            }
            return (records, hashes, revealed)
        }
        guard !records.isEmpty, relay != nil else { return }
        // Sent, or queued until the relay is back: either way this device has answered.
        await send(records, account: account)
        if revealed {
            do { try await vault.markRevealed(account: account) } catch {
                logger.error("could not record that the reveal went out", metadata: ["account": "\(account)", "problem": "\(error)"])
            }
        }
        update(account) { state in
            state.challenged.formUnion(challengedHashes)
            if revealed { state.revealed = true }
        }
    }

    /// Verifies log entries from the relay against the account's circle, stores
    /// them, and reacts to what they say about this device. An entry that takes
    /// the place of one of this device's own queued entries rebases those after it.
    func adopt(_ entries: [LogEntry], account: AccountID) async throws {
        try await owners.run(account) {
            guard let state = accounts.withLock({ $0[account] }) else { return }
            let wasMember = state.circle.isTrusted(state.deviceID)
            var circle = state.circle
            var confirmed = state.logConfirmed
            var accepted: [LogEntry] = []
            var rebasedFrom: UInt64?
            for entry in entries {
                if entry.seq < circle.nextSeq, circle.entries[Int(entry.seq)].hash != entry.hash, entry.seq >= UInt64(confirmed) {
                    circle = try rebase(state, circle: circle, after: entry)
                    rebasedFrom = min(rebasedFrom ?? entry.seq, entry.seq)
                    accepted.append(entry)
                } else {
                    let before = circle.nextSeq
                    try circle.apply(entry)
                    if circle.nextSeq > before { accepted.append(entry) }
                }
                // The relay holds this entry, so every entry before it too.
                confirmed = max(confirmed, Int(entry.seq) + 1)
            }
            guard !accepted.isEmpty || confirmed != state.logConfirmed else { return }
            let current = circle.currentGeneration ?? state.record.currentGeneration
            if let from = rebasedFrom {
                try await vault.replaceLog(account: account, from: from, entries: circle.entries[Int(from)...].map { ($0.seq, $0.encoded) },
                                           confirmed: confirmed, current: current)
            } else {
                try await vault.appendLog(account: account, entries: accepted.map { ($0.seq, $0.encoded) }, confirmed: confirmed, current: current)
            }
            let isMember = circle.isTrusted(state.deviceID)
            update(account) { state in
                state.record.currentGeneration = current
                state.setCircle(circle)
                state.logConfirmed = confirmed
            }
            if accepted.contains(where: { $0.body == .destroy }) { try await shred(account) }
            for entry in accepted {
                switch entry.body {
                case .approve(let device, _): hub.wake(account, .deviceEnrolled(device.deviceID))
                case .announce(let generation, let keyID, _) where entry.signer != state.deviceID: hub.wake(account, .rotated(Int(generation), Hex.encode(keyID)))
                case .revoke(let deviceID): hub.wake(account, .deviceRevoked(deviceID))
                default: break
                }
            }
            // Waiting reads decide again: what they ask for may be known now (an approval and a rebase are accepted entries too).
            if !accepted.isEmpty { hub.wake(account, nil) }
            if isMember, !wasMember { logger.notice("this device was approved", metadata: ["account": "\(account)"]) }
        }
    }

    /// Another device's `entry` took the number of one of this device's queued
    /// entries: the circle up to it, then this device's entries again on top,
    /// signed anew. One that no longer applies (the device is already revoked,
    /// the key already promoted) is dropped: it is done already.
    private func rebase(_ state: AccountState, circle: CircleState, after entry: LogEntry) throws -> CircleState {
        let account = state.record.id
        guard let identity = state.identity else {
            throw ProtocolError.invalid("entry \(entry.seq) takes the place of one this device queued; it is rebased at the next unlock")
        }
        var rebased = try circle.prefix(Int(entry.seq))
        try rebased.apply(entry)
        for mine in circle.entries[Int(entry.seq)...] {
            let again = rebased.nextEntry(mine.body, signer: identity.signing, signerID: state.deviceID,
                                          at: Date(timeIntervalSince1970: Double(mine.createdAt) / 1000))
            do {
                try rebased.apply(again)
            } catch {
                logger.notice("a queued entry was done by another device meanwhile", metadata: ["account": "\(account)", "kind": "\(mine.body.kind)"])
            }
        }
        logger.notice("rebased this device's queued entries after another device's", metadata: ["account": "\(account)", "seq": "\(entry.seq)"])
        return rebased
    }

    /// The circle destroyed the account: drop every key here, in the vault and in memory.
    func shred(_ account: AccountID) async throws {
        try await vault.destroyKeys(account: account)
        update(account) { state in
            state.keys = [:]
            state.owedDeliveries = []
            state.promotionDeadlines = [:]
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
            let entries = try await relay.all(.log, account: account).compactMap { try? LogEntry.decode($0.record.body) }
            try await adopt(entries, account: account)
        } catch {
            logger.warning("relay log not adopted", metadata: ["account": "\(account)", "problem": "\(error)"])
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
        // The current generation follows the log (adopt), not the arrival of a key.
        try await storeKey(account, generation, key: share.key, kek: kek, accessibility: state.record.accessibility, current: nil)
        update(account) { state in
            if state.circle.isTrusted(state.deviceID) { state.enrollment = nil }
        }
        logger.notice("key received", metadata: ["account": "\(account)", "generation": "\(header.generation)", "from": "\(header.sender)"])
        hub.wake(account, .keyReady(header.generation, header.keyID))
        let ack = ShareAck.make(account: account, generation: header.generation, keyID: header.keyID, deviceID: state.deviceID, signer: identity.signing, at: now())
        await send([.ack(ack)], account: account)
    }
}
