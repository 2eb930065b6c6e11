import Foundation
import KeyVaultPolicy
import Logging
import ServiceLifecycle
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultAccount
import KeyVaultRelay
import KeyVaultVault

/// Propagation: reading the relay, verifying what it holds, taking in shares
/// and acknowledging them. The relay is untrusted: every record is verified
/// before it changes anything, and a refused one is logged and ignored.
package struct Propagation: Sendable {
    package let service: KeyVaultService
    let vault: Vault
    let policy: PolicyStore
    let logger: Logger
    let now: @Sendable () -> Date
    package let owners: AccountOwners
    let pairings: PairingExchanges
    let relay: (any Relay)?
    let hub: WaitingHub

    init(service: KeyVaultService) {
        self.service = service
        vault = service.vault
        policy = service.policy
        logger = service.logger
        now = service.now
        owners = service.owners
        pairings = service.pairings
        relay = service.relay
        hub = service.hub
    }

    /// Runs until cancelled. At start, each account's view is rebuilt from what
    /// the vault kept of the relay (`relay_notes`), and then only what is new
    /// after the account's own cursor is read; then one pass per wake-up that
    /// concerns one of this device's accounts.
    package func propagate() async {
        guard let relay else { return }
        let wakeups = relay.wakeups()
        for account in accountIDs { await replayNotes(account) }
        await syncAll()
        // What waited in the vault when the daemon stopped goes out now (and, later,
        // whenever the relay answers again after failing: `noteRelay`).
        service.publishing.publishAllQueued()
        service.rotations.resumeOwedWork()
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await wake in wakeups.cancelOnGracefulShutdown() {
                    if wake == .opened { await self.service.relayAudit.auditRelay() }
                    for account in self.accountIDs where wake.concerns(account) { await self.sync(account, woken: true) }
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
            guard service.relayHealth.withLock({ $0.unreachableSince != nil }) || relay?.unreachableSince != nil else {
                delay = 0.25
                try? await Task.sleep(for: .milliseconds(200))
                continue
            }
            try? await Task.sleep(for: .seconds(BackOff.jittered(delay)))
            delay = min(delay * 2, 5)
            await syncAll()
        }
    }

    /// Shares kept unopened per account while it is locked (each at most
    /// `KeyShare.maxSealedByteCount`): a relay, untrusted, must not fill the disk or
    /// memory of a locked device. A rotation sends one share per device, so this is
    /// more generations than any real wait sees; past it, further shares are refused
    /// (logged) and the relay can deny those keys, which it always could.
    static let maxKeptShares = 256

    /// Rows read and taken in per job of the account.
    static let pageSize = 250

    var accountIDs: [AccountID] { owners.heldIDs }

    func syncAll() async {
        for account in accountIDs { await sync(account) }
    }

    /// One pass over what is new on the relay for one account, after its own
    /// cursor, a page at a time: each page read outside the account's line (a
    /// relay that answers slowly or not at all holds no job: issue 34), then
    /// taken in by a job of its own, so the account's other work goes between
    /// pages however much a relay files. Each page is processed (what it changes
    /// is stored), then the cursor moves on with the records kept for the next
    /// start, in one vault transaction: a crash between the two reads the page
    /// again, and reading a record twice changes nothing. Inside a job (a rotation
    /// reading before it appends) the pages are read in it.
    ///
    /// `woken`: a pass a wake-up asked for, which may end where the relay's held read of the
    /// account takes over (`Relay.covers`). Any other pass (before a rotation, an approval, after
    /// an unlock) reads the relay itself, so what another device wrote before this call is in it.
    func sync(_ account: AccountID, woken: Bool = false) async {
        guard let relay else { return }
        do {
            var answered = false
            while let more = try await nextPage(account, relay: relay, woken: woken) {
                answered = true
                if !more { break }
            }
            if answered { service.publishing.noteRelay(nil) }
            await owners.run(account) { await advanceEnrollments(account) }
        } catch let error as RelayError {
            service.publishing.noteRelay(error)
        } catch {
            logger.error("relay pass failed", metadata: ["account": "\(account)", "problem": "\(error)"])
        }
    }

    /// Reads the page after the account's cursor (outside the line, unless the task runs the
    /// account's job: then `run` is inline) and takes it in, in a job. Answers whether another page may follow,
    /// or nil when nothing was asked: in a pass a wake-up asked for, the relay's held read of the account
    /// is out after this cursor and brings what lands (`Relay.covers`), so the pass ends there without a
    /// round trip. While the relay is failing it is always asked: its answer is what ends the outage.
    private func nextPage(_ account: AccountID, relay: any Relay, woken: Bool) async throws -> Bool? {
        guard let (cursor, restarts) = owners.read(account, { ($0.relayCursor, $0.readingRestarts) }) else { return false }
        if woken, relay.covers(account, after: cursor),
           service.relayHealth.withLock({ $0.unreachableSince == nil }), relay.unreachableSince == nil { return nil }
        let rows = try await relay.rows(account: account, after: cursor, limit: Self.pageSize)
        guard !rows.isEmpty else { return false }
        return try await owners.run(account) { try await take(rows, readAfter: cursor, restarts, account) }
    }

    /// Takes in a page read after `readAfter`, in the account's job. Another pass may have
    /// taken some of its rows since it was read (two passes read outside the line at once):
    /// those are skipped, and the next page is read from the cursor as it is now.
    private func take(_ rows: [RelayRow], readAfter: RelayCursor, _ restartsThen: Int, _ account: AccountID) async throws -> Bool {
        guard let last = rows.last, let (cursor, restarts) = owners.read(account, { ($0.relayCursor, $0.readingRestarts) }) else { return false }
        // A page that does not move past the cursor would be asked for again and again: refused.
        guard last.cursor > readAfter else {
            logger.warning("refused a relay page that does not move past its cursor", metadata: ["account": "\(account)", "cursor": "\(readAfter)"])
            return false
        }
        // Reading started again from the relay's start meanwhile (a restored relay): this page, maybe
        // the old store's, is dropped and reading goes on from the cursor as it is now.
        guard restarts == restartsThen, cursor >= readAfter else { return true }
        let fresh = rows.filter { $0.cursor > cursor }
        guard !fresh.isEmpty else { return true }
        var kept: [RelayNote] = []
        for row in fresh {
            let seenAt = now()
            if let kind = await process(row, seenAt: seenAt) {
                kept.append(RelayNote(cursor: row.cursor, kind: kind, body: row.record.body, seenAt: seenAt))
            }
        }
        // The machine decides whether the cursor goes to the vault now, with the records kept (`read`).
        try await service.perform(account, .read(upTo: last.cursor, rows: fresh.count, kept: kept))
        return true
    }

    /// At start: the relay records this device kept for the account, replayed in
    /// order, so requests, challenges, reveals, acknowledgements and shares that
    /// wait for an unlock are known again without reading the relay.
    func replayNotes(_ account: AccountID) async {
        await owners.run(account) {
            let notes = service.update(account, .notesReplayed)?.replayed ?? []
            let me = owners.read(account, { $0.deviceID })
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
        guard let held = owners.holding(account) else { return nil }
        // An account on its own here follows no circle: the relay's rows for its ID are another's.
        guard held.read({ !$0.circle.isEmpty || $0.enrollment.isJoining }) == true else { return nil }
        do {
            switch row.record.kind {
            case .log:
                try await adopt([try LogEntry.decode(row.record.body)], account: account)
                return nil
            case .request:
                if SignedEnvelope.label(of: row.record.body) == Labels.enrollRequest {
                    // Never answered, only listed: the person learns here that the new device must update.
                    let old = try EnrollmentRequest.decode(row.record.body)
                    guard old.account == account else { throw ProtocolError.invalid("a request filed under another account") }
                    logger.notice("a pairing version 1 request: that device must update keyvaultd and enroll again",
                                  metadata: ["account": "\(account)", "device": "\(old.device.deviceID)"])
                    let kept = service.update(account, .retiredRequestArrived(device: old.device, headHash: old.headHash, requestedAt: old.requestedDate),
                                              now: seenAt)?.kept ?? false
                    return kept ? .request : nil
                }
                let request = try PairingRequest.decode(row.record.body)
                guard request.account == account else { throw ProtocolError.invalid("a request filed under another account") }
                let kept = service.update(account, .requestArrived(request), now: seenAt)?.kept ?? false
                return kept ? .request : nil
            case .challenge:
                return try await noteChallenge(row.record.body, account: account) ? .challenge : nil
            case .reveal:
                return try noteConfirmation(row.record.body, account: account) ? .reveal : nil
            case .share:
                guard row.record.recipient == owners.read(account, { $0.deviceID }) else { return nil }
                // Locked, or joining and its approval not yet authenticated: kept sealed for later
                // (the vault keeps it; the relay is not read again). Unverified until then, so bounded:
                // no larger than a share can be, and no more than `Self.maxKeptShares` per account.
                guard (KeyShare.minSealedByteCount...KeyShare.maxSealedByteCount).contains(row.record.body.count) else {
                    throw ProtocolError.invalid("a share of \(row.record.body.count) bytes; a share is \(KeyShare.minSealedByteCount) to \(KeyShare.maxSealedByteCount)")
                }
                func keptSealed() throws -> Bool {
                    try service.update(account, .shareArrived(sealed: row.record.body, cursor: row.cursor, limit: Self.maxKeptShares))?.orThrow().kept ?? false
                }
                if try keptSealed() { return .share }
                // A lock is answered at once, not after this pass: one that came since the check above
                // leaves the share sealed, and it is kept as if it had come locked (never dropped).
                while try await takeShare(row.record.body, account: account) {
                    if try keptSealed() { return .share }
                }
                return nil
            case .ack:
                let ack = try ShareAck.decode(row.record.body)
                // The signature is checked on a snapshot; only the recording runs under the account's lock.
                guard let verified = try owners.read(account, { try $0.verify(ack) }),
                      let effects = try service.update(account, .acknowledged(verified))?.orThrow().promotions else { return nil }
                // After this page: promoting appends to the log in a job of its own, and publishes after it,
                // outside the line.
                if !effects.isEmpty { owners.followUp { await self.service.rotations.promoteDue(account) } }
                return .ack
            }
        } catch {
            let metadata: Logger.Metadata = [
                "account": "\(account)", "kind": "\(row.record.kind.rawValue)", "cursor": "\(row.cursor)", "problem": "\(error)",
            ]
            // A record a device wrote before it was revoked is history, not tampering: said quietly.
            if case ProtocolError.untrustedSigner(let signer) = error, owners.read(account, { $0.circle.members[signer]?.revoked }) == true {
                logger.debug("skipped a record of a device since revoked", metadata: metadata)
            } else {
                logger.warning("refused relay record", metadata: metadata)
            }
            return nil
        }
    }

    /// A member's pairing record (docs/PAIRING.md): the response the new device's
    /// exchange takes (the first for its request), or the approval it authenticates.
    /// Answers whether to keep it for the next start (nothing of an exchange outlives
    /// the run that holds its CPace state, so nothing is).
    private func noteChallenge(_ body: [UInt8], account: AccountID) async throws -> Bool {
        guard let state = owners.state(account), state.enrollment.isJoining else { return false }
        switch SignedEnvelope.label(of: body) {
        case Labels.pairingResponse:
            let response = try PairingResponse.accept(body, in: state.circle)
            guard state.enrollment.takes(response), let request = state.enrollment.ownRequest, let identity = state.identity,
                  let initiator = pairings.takeInitiator(for: account) else { return false }
            let answer = Pairing.answer(response, to: request, initiator: initiator, circle: state.circle, signer: identity.signing)
            service.update(account, .answered(answer))
            switch answer {
            case .confirmed(let confirmation, let sessionKey):
                logger.info("pairing confirmed; waiting for the approval", metadata: ["account": "\(account)"])
                // Kept (wrapped) before `Ta` goes out: a restart must not leave an approval it cannot check.
                if let kek = state.kek {
                    let wrapped = WrappedSecret.wrap(sessionKey.bytes, under: kek, context: WrapContext(account: account, kind: .pairingKey, generation: 0))
                    do {
                        try await service.perform(account, .pairingKeyKept(wrapped))
                    } catch {
                        logger.error("could not keep the pairing key", metadata: ["account": "\(account)", "problem": "\(error)"])
                    }
                }
                service.publishing.sendPairingOutsideLine([.reveal(confirmation)], account: account)
            case .mismatch(let refusal, let why):
                logger.warning("pairing failed", metadata: ["account": "\(account)", "why": "\(why)"])
                service.publishing.sendPairingOutsideLine([.reveal(refusal)], account: account)
                hub.announce(account, .pairingFailed(state.deviceID, reason: why == .otherCircle ? "other-circle" : "code-mismatch"))
            }
        case Labels.pairingApproval:
            let approval = try PairingApproval.decode(body) { state.circle.isTrusted($0) ? state.circle.members[$0]?.keys.signing : nil }
            service.update(account, .approvalArrived(approval))
            await authenticateApproval(account)
        default:
            throw ProtocolError.malformed("a pairing version 1 challenge: pairing is version 2 here")
        }
        return false
    }

    /// A joining device whose approval now verifies under the exchange's key takes
    /// the shares it kept sealed until then.
    func authenticateApproval(_ account: AccountID) async {
        let check = service.update(account, .approvalChecked)?.approvalCheck ?? .waiting
        if case .refused(let count) = check {
            // PROTOCOL.md, "Outcomes": a rejected record changes nothing and is logged.
            logger.warning("refused relay record", metadata: [
                "account": "\(account)", "kind": "challenge",
                "problem": "invalid: \(count) approval(s) naming an entry of the log do not verify under this exchange's key",
            ])
        }
        guard check == .authentic else { return }
        logger.notice("this device's approval is authentic", metadata: ["account": "\(account)"])
        await takeKeptShares(for: account)
    }

    /// The new device's confirmation of a response (or its refusal): kept for the
    /// approval waiting on it. Answers whether it answers a request this device holds.
    private func noteConfirmation(_ body: [UInt8], account: AccountID) throws -> Bool {
        guard SignedEnvelope.label(of: body) == Labels.pairingConfirm else {
            throw ProtocolError.malformed("a pairing version 1 reveal: pairing is version 2 here")
        }
        _ = try service.update(account, .confirmationArrived(body))?.orThrow()
        // Kept only in memory: the approval that waits for it lives in this run.
        return false
    }

    /// After a pass (or an unlock): a joining device whose approve entry and approval
    /// have both arrived, in whichever order, checks the approval and joins.
    func advanceEnrollments(_ account: AccountID) async {
        await owners.run(account) {
            guard let state = owners.state(account), state.enrollment.isJoining,
                  case .confirmed = state.enrollment.progress else { return }
            await authenticateApproval(account)
        }
    }

    /// Verifies log entries from the relay against the account's circle
    /// (`CircleSync`, pure), stores what it accepted, then publishes it and
    /// reacts to what the entries say about this device.
    func adopt(_ entries: [LogEntry], account: AccountID) async throws {
        try await owners.run(account) {
            guard let state = owners.state(account) else { return }
            // An account on its own here follows no circle it reads: its circle is founded from this
            // device or not at all (PROTOCOL.md, "Founding later"): another device's is never merged in.
            guard !state.circle.isEmpty || state.enrollment.isJoining else { return }
            let outcome = try CircleSync.adopt(entries, into: state.circle, confirmed: state.logConfirmed, me: state.deviceID, signer: state.identity?.signing)
            guard !outcome.isEmpty || outcome.confirmed != state.logConfirmed else { return }
            // The machine names the log's write: appended, or replaced from where a rebase rewrote it.
            try await service.perform(account, .circleAdopted(outcome.circle, confirmed: outcome.confirmed))
            if let from = outcome.rewrittenFrom {
                logger.notice("rebased this device's queued entries after another device's", metadata: ["account": "\(account)", "seq": "\(from)"])
                for body in outcome.dropped {
                    logger.notice("a queued entry was done by another device meanwhile", metadata: ["account": "\(account)", "kind": "\(body.kind)"])
                }
            }
            if outcome.destroyed { try await shred(account) }
            for event in outcome.events { hub.announce(account, event) }
            if outcome.joined { logger.notice("this device was approved", metadata: ["account": "\(account)"]) }
        }
    }

    /// The circle destroyed the account: drop every key here, in the vault and in memory.
    func shred(_ account: AccountID) async throws {
        try await service.perform(account, .shredded)
        logger.notice("account destroyed everywhere: keys shredded", metadata: ["account": "\(account)"])
        hub.announce(account, AccountEvent(name: "destroyed", fields: [:]))
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
        let kept = owners.read(account, { $0.keptShares }) ?? [:]
        var done: [RelayCursor] = []
        for (cursor, sealed) in kept.sorted(by: { $0.key < $1.key }) {
            // Locked again meanwhile, or still joining with no authentic approval: they stay sealed.
            guard owners.read(account, { $0.mayOpenShares }) ?? false else { break }
            do {
                // Locked since the check above: this one and the rest stay kept for the next unlock.
                if try await takeShare(sealed, account: account) { break }
            } catch {
                logger.warning("refused relay record", metadata: ["account": "\(account)", "kind": "share", "cursor": "\(cursor)", "problem": "\(error)"])
            }
            done.append(cursor)
        }
        // The machine names the vault's write: the notes dropped there first, then from memory (kept in
        // both if the vault fails: the next unlock finds the keys held and drops them again).
        do { try await service.perform(account, .sharesTaken(done)) } catch {
            logger.error("could not forget taken shares", metadata: ["account": "\(account)", "problem": "\(error)"])
        }
    }

    /// Opens one share, checks it against the circle, stores the key wrapped
    /// under this device's KEK, and acknowledges it. true: the account is locked and the
    /// share was left sealed, for the caller to keep until the unlock (it is not taken here).
    @discardableResult
    func takeShare(_ sealed: [UInt8], account: AccountID) async throws -> Bool {
        guard let state = owners.state(account) else { return false }
        guard let identity = state.identity, let kek = state.kek else { return true }
        // A joining device takes nothing from a circle whose approval of it it has not authenticated.
        guard state.enrollment.trustsItsCircle else { throw ProtocolError.invalid("a share before this device's approval was authenticated") }
        // Every rule of PROTOCOL.md "Key share", in the protocol layer (the vectors run the same code).
        let share = try KeyShare.accept(sealed, with: identity.box, as: state.deviceID, in: state.circle)
        let header = share.header
        if state.keys[header.keyID] != nil { return false }  // already held
        let generation = KeyGeneration(number: header.generation, keyID: header.keyID, createdAt: header.createdAt, state: .active)
        try await service.storeKey(account, generation, key: share.key, kek: kek, accessibility: state.record.accessibility)
        // Joined in memory first, whatever the vault does: a joined device left joining (its enrollment row
        // kept by a failed write) could ask to join again and then refuse its own circle's shares.
        if service.update(account, .keyTakenAsMember)?.contains(.joined) ?? false {
            do { try await vault.finishEnrollment(account: account) } catch {
                logger.error("could not record that this device joined", metadata: ["account": "\(account)", "problem": "\(error)"])
            }
        }
        logger.notice("key received", metadata: ["account": "\(account)", "generation": "\(header.generation)", "from": "\(header.sender)"])
        hub.announce(account, .keyReady(header.generation, header.keyID))
        let ack = ShareAck.make(account: account, generation: header.generation, keyID: header.keyID, deviceID: state.deviceID, signer: identity.signing, at: now())
        // Kept in the outbox, then written outside the account's line: the next share, and the account's
        // next job, do not wait on the relay's write, and a crash before it lands loses nothing.
        await service.publishing.acknowledgeOutsideLine([.ack(ack)], account: account)
        return false
    }
}
