package import Foundation
import Logging
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultAccount
import KeyVaultVault
import KeyVaultRelay

/// A record a job owes the relay, and its place in the vault's outbox (nil: the vault could not keep it).
struct OwedRecord: Sendable, Equatable {
    let record: RelayRecord
    let outboxID: Int64?
}

/// What this device owes the relay, and getting it there. A log entry is
/// appended here first (verified, stored, served) and published after; while
/// the relay is away the entries, the shares owed for them and other records
/// wait in the vault, and go out once it is back. If another device took an
/// entry's number meanwhile, `adopt` rebases this device's entries after it.
package struct Publishing: Sendable {
    package let service: KeyVaultService
    let vault: Vault
    let logger: Logger
    let now: @Sendable () -> Date
    package let owners: AccountOwners
    let relay: (any Relay)?
    let hub: WaitingHub

    init(service: KeyVaultService) {
        self.service = service
        vault = service.vault
        logger = service.logger
        now = service.now
        owners = service.owners
        relay = service.relay
        hub = service.hub
    }

    /// Appends an entry signed by this device on the local head, with what it
    /// owes for it, in one vault transaction. `body` may answer nil: nothing to do.
    /// The relay gets it from `publishQueued`. `enqueue`: records that go to the
    /// outbox with the entry, in its transaction (they follow it to the relay).
    @discardableResult
    func appendEntry(_ id: AccountID, owe deliveries: [OwedDelivery] = [], promotionDeadline: (keyID: KeyID, at: Date)? = nil,
                     enqueue: @escaping @Sendable (LogEntry) -> [RelayRecord] = { _ in [] },
                     _ body: @escaping @Sendable (CircleState) throws -> LogEntry.Body?) async throws -> LogEntry? {
        try await owners.run(id) {
            let state = try service.existing(id)
            guard let identity = state.identity else { throw Refusal.locked(id) }
            guard let content = try body(state.circle) else { return nil }
            let entry = state.circle.nextEntry(content, signer: identity.signing, signerID: state.deviceID, at: now())
            var circle = state.circle
            try circle.apply(entry)
            // The machine names the write: the entry, the current key, what it owes, the deadline and the
            // outbox rows in one transaction. The deadline's timer is the caller's (`schedule`).
            try await service.perform(id, .appended(circle, owing: deliveries, promotion: promotionDeadline, outbox: enqueue(entry)))
            if case .approve(let device, _) = content { hub.announce(id, .deviceEnrolled(device.deviceID)) }
            if content == .destroy { try await service.propagation.shred(id) }
            return entry
        }
    }

    /// Publishes this device's unconfirmed entries with the shares it owes, in
    /// one relay transaction, then any queued records. Answers whether nothing
    /// is left waiting, and if something is, why (it stays queued either way).
    @discardableResult
    func publishQueued(_ id: AccountID) async -> PublishOutcome {
        guard let relay else { return .unreachable }
        // A turn held outside the line never waits for a job: the job would wait for that turn.
        assert(AccountOwners.running == id || Self.publishTurnHeld != id, "a job's publish asked for from inside a publish turn held outside the line")
        return await owners.run(id) { await inPublishTurn(id) { await publishInJob(id, relay: relay) } }
    }

    /// The relay write of what a job left queued (its entries, the shares they owe), made after the
    /// job and outside the account's line (issue 34): the account's other jobs (a passphrase change,
    /// an incoming share, an approval) go on while the relay is slow or cannot be written. What the
    /// relay took is recorded by a job after (`recordWritten`), which also sends what else waits and
    /// answers the outcome; a relay that did not answer leaves everything queued in the vault, as a
    /// job's publish does. Inside a job (or a publish turn) it is `publishQueued`.
    @discardableResult
    func publishOutsideLine(_ id: AccountID) async -> PublishOutcome {
        guard let relay else { return .unreachable }
        guard AccountOwners.running != id else { return await publishQueued(id) }
        // Nothing in a turn held outside the line publishes again (it would wait for the line holding the turn).
        assert(Self.publishTurnHeld != id, "a publish from inside a publish turn held outside the line")
        enum Step { case job, unreachable(any Error), waitingForUnlock, stopped }
        let step: Step = await inPublishTurn(id) {
            // A write taken and not yet recorded is recorded first, by the job (nothing is sent twice).
            guard owners.existing(id)?.written.withLock({ $0 == nil }) == true,
                  let (batch, confirmedThrough, settled) = queuedBatch(id), !batch.isEmpty else { return .job }
            do {
                let riding = batch.contains(where: { $0.kind == .log }) ? try await vault.outbox(account: id).filter(\.isPairingApproval) : []
                let audits = service.relayAudits.load(ordering: .sequentiallyConsistent)
                try await relay.publish(batch: batch + riding.map(\.record))
                // The relay was opened again meanwhile (a file replaced): the write may have gone to the old
                // store, which its audit did not see. Not recorded as taken: the job's publish sends it again.
                guard service.relayAudits.load(ordering: .sequentiallyConsistent) == audits else { return .job }
                owners.existing(id)?.written.withLock {
                    $0 = AccountOwner.WrittenBatch(through: confirmedThrough, settled: settled, riders: riding.map(\.id))
                }
                noteRelay(nil)
                return .job
            } catch RelayError.needsUnlock {
                return .waitingForUnlock
            } catch let error as RelayError where error.isAnswer {
                return .job  // a number taken, a refusal: the job's publish reads, rebases or says why
            } catch is CancellationError {
                return .stopped
            } catch {
                return .unreachable(error)
            }
        }
        switch step {
        case .job: return await publishQueued(id)
        case .waitingForUnlock: return .waitingForUnlock
        case .stopped: return .unreachable  // a stop: everything is in the vault, and the relay was not found down
        case .unreachable(let error):
            noteRelay(error)
            return .unreachable
        }
    }

    /// The account whose publish turn the current task holds: a publish it makes again runs in it.
    @TaskLocal static var publishTurnHeld: AccountID?

    /// Runs `body` in the account's publish turn (`AccountOwner.publishTurn`): no two relay writes of
    /// its entries and shares at once. A job waits for the turn; a turn held outside the line never
    /// waits for the line, so neither waits on the other for ever.
    private func inPublishTurn<T: Sendable>(_ id: AccountID, _ body: () async -> T) async -> T {
        if Self.publishTurnHeld == id { return await body() }
        let (owner, ticket) = await owners.publishTurn(id)
        defer { owners.endPublishTurn(id, owner, ticket) }
        return await Self.$publishTurnHeld.withValue(id) { await body() }
    }

    /// Records in the vault and the state a write made outside the line that the relay took
    /// (`publishOutsideLine`); in a job, in the publish turn. A vault that fails here leaves the
    /// entries unconfirmed: the next publish sends them again, and the relay's answer (the number
    /// taken by entries that are byte for byte these) confirms them. `written` is cleared only once the count is in the
    /// state: the relay's audit, reading both outside the line, always sees one of the two.
    private func recordWritten(_ id: AccountID) async {
        guard let owner = owners.existing(id), let written = owner.written.withLock({ $0 }) else { return }
        defer { owner.written.withLock { $0 = nil } }
        do {
            try await confirm(id, through: written.through, settled: written.settled)
            try await vault.dequeue(ids: written.riders)
        } catch {
            logger.error("could not record a relay write in the vault", metadata: ["account": "\(id)", "problem": "\(error)"])
        }
    }

    /// `publishQueued`'s work, in the account's job and its publish turn.
    private func publishInJob(_ id: AccountID, relay: any Relay) async -> PublishOutcome {
        await recordWritten(id)
        // Only an answer from the relay says it is reachable: nothing to send says nothing.
        var answered = false
        var taken: LogSeq?
        var readWholeLog = false
        do {
            // Pairing approvals queued with their approve entry ride in the entry's write, so the new
            // device reads entry, shares and approval in one pass (one wake-up, not two). The outbox
            // is read for them only when an entry goes out.
            var riders: [OutboxRecord]?
            var writes = 0
            while writes < 10 {
                writes += 1
                guard let (batch, confirmedThrough, settled) = queuedBatch(id) else { break }
                var riding: [OutboxRecord] = []
                if batch.contains(where: { $0.kind == .log }) {
                    if let riders { riding = riders } else { riding = try await vault.outbox(account: id).filter(\.isPairingApproval) }
                    riders = riding
                }
                do {
                    if !batch.isEmpty {
                        try await relay.publish(batch: batch + riding.map(\.record))
                        answered = true
                    }
                } catch RelayError.logSeqTaken(let seq) {
                    // Another device appended first: read its entries (adopt rebases ours after them), then again.
                    let head = owners.read(id) { $0.circle.headHash }
                    await service.propagation.sync(id)
                    if !readWholeLog, !holdsExactly(batch, id), !isFounding(id), owners.read(id, { $0.circle.headHash }) == head {
                        // The pass adopted nothing: an entry a pass could not rebase ours after while the account
                        // was locked (a rebase needs this device's key) is behind the cursor. The whole log, once.
                        readWholeLog = true
                        await service.propagation.readLog(for: id)
                    }
                    if holdsExactly(batch, id) {
                        // Its entries were committed by an earlier write whose taking was not recorded (an answer
                        // that never came; a write an audit of the relay began during). That write may have
                        // carried fewer shares or riders (the account was locked then, or they were queued
                        // since): only the entries are confirmed, and the rest goes again in the next write
                        // (a share sealed again is stored again, and ignored by a device that holds its key;
                        // a rider's same bytes are stored once). Not counted: it happens once per batch.
                        try await confirm(id, through: confirmedThrough, settled: [])
                        riders = nil
                        writes -= 1
                        continue
                    }
                    taken = seq
                    // A genesis taken by another's is not retried: this device's founding is abandoned below.
                    if seq == .genesis, isFounding(id) { break }
                    continue
                }
                try await confirm(id, through: confirmedThrough, settled: settled)
                try await vault.dequeue(ids: riding.map(\.id))
                if !riding.isEmpty { riders = [] }
            }
            if taken == .genesis, isFounding(id) {
                // A new account never existed anywhere else: dropped. An account this device held on
                // its own before it met the relay is kept, on its own, and the conflict is said.
                if owners.read(id, { $0.foundedAtCreation }) == true {
                    try await abandonFounding(id, because: "another device founded it on the relay first")
                } else {
                    try await service.founding.withdrawForConflict(id)
                }
                return .blocked(seq: .genesis)
            }
            // What else waits in the outbox: pairing records in the job, as the calls that queued them
            // expect them sent when they answer (a new request before `enroll` answers); acks outside the line.
            if try await sendOutbox(id, relay: relay) { answered = true }
            if answered { noteRelay(nil) }
            let waiting = owners.read(id) { (entries: !$0.unconfirmedEntries.isEmpty, shares: !$0.owedDeliveries.isEmpty) }
            guard let waiting, waiting.entries || waiting.shares else { return .done }
            if waiting.entries, let taken {
                // The relay answers, and holds at that number a record this device cannot adopt.
                logger.warning("the relay's log holds an entry that does not verify where this device's goes",
                               metadata: ["account": "\(id)", "seq": "\(taken)"])
                return .blocked(seq: taken)
            }
            return waiting.entries ? .unreachable : .waitingForUnlock
        } catch RelayError.needsUnlock {
            return .waitingForUnlock
        } catch let error as RelayError where error.isAnswer {
            // The relay service answered and will not take it (an identity, a membership): said, not queued as an outage.
            logger.warning("the relay service refused this device's records", metadata: ["account": "\(id)", "problem": "\(error)"])
            return .refused(error)
        } catch {
            noteRelay(error)
            return .unreachable
        }
    }

    /// Whether the account's genesis is this device's and not yet on the relay (`AccountState.isFounding`).
    func isFounding(_ id: AccountID) -> Bool {
        owners.read(id, { $0.isFounding }) ?? false
    }

    /// Drops an account whose founding did not reach the relay, from the vault
    /// and from memory: it never existed anywhere else, so nothing is lost.
    func abandonFounding(_ id: AccountID, because why: String) async throws {
        try await owners.run(id) {
            try await vault.deleteAccount(id)
            service.install(id, nil)
            logger.warning("account not founded: \(why)", metadata: ["account": "\(id)"])
        }
    }

    /// Whether the relay is known to hold every log entry of `batch`, byte for
    /// byte, in this device's log (the batch went in whole, in one transaction).
    private func holdsExactly(_ batch: [RelayRecord], _ id: AccountID) -> Bool {
        let entries = batch.filter { $0.kind == .log }
        guard !entries.isEmpty, let state = owners.state(id) else { return false }
        return entries.allSatisfy { record in
            guard let seq = record.logSeq?.index, seq < state.logConfirmed, seq < state.circle.entries.count else { return false }
            return state.circle.entries[seq].encoded == record.body
        }
    }

    /// The next relay write for `id`: its unconfirmed entries, then the shares
    /// owed, sealed to the devices the (rebased) circle trusts. nil: nothing to write.
    private func queuedBatch(_ id: AccountID) -> (records: [RelayRecord], confirmedThrough: Int, settled: [OwedDelivery])? {
        struct Delivery { var owed: OwedDelivery; var key: SecretKey; var generation: KeyGeneration; var devices: [DeviceKeys] }
        let found = owners.read(id) { state -> (entries: [LogEntry], confirmed: Int, identity: DeviceIdentity?, me: DeviceID, deliveries: [Delivery], gone: [OwedDelivery]) in
            // Every trusted member but this device, recovery kits' members included: a kit restores the keys made after it.
            let others = state.circle.shareRecipients.values.map(\.keys).filter { $0.deviceID != state.deviceID }
            var deliveries: [Delivery] = []
            var gone: [OwedDelivery] = []
            for owed in state.owedDeliveries.sorted(by: { ($0.keyID, $0.recipient?.hex ?? "") < ($1.keyID, $1.recipient?.hex ?? "") }) {
                let generation = state.knownGenerations.first { $0.keyID == owed.keyID && $0.state == .active }
                guard let generation, state.generations.contains(where: { $0.keyID == owed.keyID }) else {
                    gone.append(owed)  // shredded, or never announced: nothing left to send
                    continue
                }
                // Locked: the key is unreadable now; it is sent after the unlock.
                guard let key = state.heldKey(owed.keyID) else { continue }
                deliveries.append(Delivery(owed: owed, key: key, generation: generation,
                                           devices: owed.recipient.map { one in others.filter { $0.deviceID == one } } ?? others))
            }
            return (Array(state.unconfirmedEntries), state.logConfirmed, state.identity, state.deviceID, deliveries, gone)
        }
        guard let found else { return nil }
        var records = found.entries.map(RelayRecord.log)
        var settled = found.gone
        // Shares need this device's keys: a locked device sends its entries and keeps owing the shares.
        if let identity = found.identity {
            for delivery in found.deliveries {
                let g = delivery.generation
                let headers = delivery.devices.map {
                    KeyShare.Header(account: id, generation: g.number, keyID: g.keyID, createdAt: g.createdAt, sender: found.me, recipient: $0.deviceID)
                }
                let sealed = KeyShare.sealAll(key: delivery.key, headers: headers, recipients: delivery.devices.map(\.box), signer: identity.signing)
                records += zip(delivery.devices, sealed).map { .share(account: id, recipient: $0.deviceID, sealed: $1) }
                settled.append(delivery.owed)
            }
        }
        guard !records.isEmpty || !settled.isEmpty else { return nil }
        return (records, found.confirmed + found.entries.count, settled)
    }

    private func confirm(_ id: AccountID, through count: Int, settled: [OwedDelivery]) async throws {
        try await owners.run(id) {
            // Once the relay holds this device's genesis the account stops founding, and reads
            // waiting for its keys get them (the read model changed).
            _ = try await service.perform(id, .relayConfirmed(through: count, settled: settled))
        }
    }

    /// Acknowledgements a job owes the relay, kept in the vault's outbox first, in the job: a crash, a
    /// stop or a relay that does not take them loses none, and the next publish or start sends them
    /// (`sendOutbox`). One the vault could not keep (a full disk) is still sent, once.
    func owe(_ records: [RelayRecord], account: AccountID) async -> [OwedRecord] {
        guard relay != nil, !records.isEmpty else { return [] }
        do {
            let ids = try await vault.enqueue(account: account, records: records)
            return zip(records, ids).map { OwedRecord(record: $0, outboxID: $1) }
        } catch {
            logger.error("could not queue records for the relay", metadata: ["account": "\(account)", "problem": "\(error)"])
            return records.map { OwedRecord(record: $0, outboxID: nil) }
        }
    }

    /// Sends acknowledgements outside the account's line, kept in the outbox first (`owe`): the job
    /// that owes them does not wait on the relay.
    func acknowledgeOutsideLine(_ acks: [RelayRecord], account: AccountID) async {
        handOutsideLine(await owe(acks, account: account), account: account)
    }

    /// Sends a pairing exchange's message outside the account's line, not kept first: nothing of an
    /// exchange outlives the run that holds its CPace state, so a message from a run a crash ended
    /// must not reach the relay after it (`deliver` queues one the relay does not take, as before).
    func sendPairingOutsideLine(_ records: [RelayRecord], account: AccountID) {
        handOutsideLine(records.map { OwedRecord(record: $0, outboxID: nil) }, account: account)
    }

    private func handOutsideLine(_ owed: [OwedRecord], account: AccountID) {
        guard relay != nil else { return }
        owners.sendOutsideLine(account, owed) { batch in await self.deliver(batch, account: account) }
    }

    /// Sends what waits in the account's outbox: its pairing records now (answers whether there were
    /// any), its acknowledgements by the writer outside the line (one it holds already is not handed twice).
    private func sendOutbox(_ id: AccountID, relay: any Relay) async throws -> Bool {
        let queued = try await vault.outbox(account: id)
        handOutsideLine(queued.filter { $0.record.kind == .ack }.map { OwedRecord(record: $0.record, outboxID: $0.id) }, account: id)
        let now = queued.filter { $0.record.kind != .ack }
        guard !now.isEmpty else { return false }
        try await relay.publish(batch: now.map(\.record))
        try await vault.dequeue(ids: now.map(\.id))
        return true
    }

    /// Writes owed records to the relay and takes those kept out of the outbox. What the relay does not
    /// take waits for the next publish: a kept record stays in the outbox, and one not kept goes there
    /// now (written before the outage is noted, so the publish the relay's next answer starts finds it).
    /// At a stop nothing more is tried. The relay keeps one of a record sent twice.
    func deliver(_ owed: [OwedRecord], account: AccountID) async {
        guard let relay, !owed.isEmpty else { return }
        let kept = owed.compactMap(\.outboxID)
        let unkept = owed.filter { $0.outboxID == nil }.map(\.record)
        do {
            guard !Task.isCancelled else { throw CancellationError() }
            try await relay.publish(batch: owed.map(\.record))
        } catch {
            if !unkept.isEmpty {
                // Not cancelled with this task at a stop: the records must reach the vault.
                let vault = vault
                do { _ = try await Task.detached { try await vault.enqueue(account: account, records: unkept) }.value } catch {
                    logger.error("could not queue records for the relay", metadata: ["account": "\(account)", "problem": "\(error)"])
                }
            }
            if !(error is CancellationError) { noteRelay(error) }
            logger.notice("records for the relay wait for the next publish", metadata: [
                "account": "\(account)", "kinds": "\(Set(owed.map(\.record.kind.rawValue)).sorted())", "problem": "\(error)",
            ])
            return
        }
        noteRelay(nil)
        do { try await vault.dequeue(ids: kept) } catch {
            // Sent again by the next publish, which the relay takes as the same record.
            logger.warning("could not take sent records out of the outbox", metadata: ["account": "\(account)", "problem": "\(error)"])
        }
    }

    /// Publishes what every account has waiting (after a start, or once the relay is back): each
    /// account's publish outside its line and beside the others', so an account whose writes the relay
    /// does not take (a held file, a worker down) holds back neither its own jobs nor another account.
    func publishAllQueued() {
        for id in owners.heldIDs {
            guard let owner = owners.existing(id),
                  owner.publishingWhatWaited.withLock({ started in defer { started = true }; return !started }) else { continue }
            owners.outsideLine(id) {
                await self.publishOutsideLine(id)
                owner.publishingWhatWaited.withLock { $0 = false }
            }
        }
    }

    // MARK: Relay health

    /// Remembers since when the relay has been failing (nil error: it answered).
    /// Its first answer after failing sends what waited for it.
    func noteRelay(_ error: (any Error)?) {
        let now = now()
        let (wasDown, isDown) = service.relayHealth.withLock { health -> (Bool, Bool) in
            let was = health.unreachableSince != nil
            if let error {
                // An answer that refuses is not an outage.
                if let error = error as? RelayError, error.isAnswer { return (was, was) }
                health.unreachableSince = health.unreachableSince ?? now
                health.problem = "\(error)"
            } else {
                health.unreachableSince = nil
                health.problem = nil
                health.hasAnswered = true
            }
            return (was, health.unreachableSince != nil)
        }
        if isDown, !wasDown { logger.warning("relay unreachable: queueing", metadata: ["problem": "\(error.map { "\($0)" } ?? "")"]) }
        if wasDown, !isDown {
            logger.notice("relay reachable again")
            // Not part of whichever job noticed: each account's publish outside its line.
            publishAllQueued()
        }
    }

    /// The relay's health and what waits for it (the outbox counted by an awaited read of the vault).
    package func relayStatus() async -> RelayStatus? {
        guard let relay else { return nil }
        var health = service.relayHealth.withLock { $0 }
        // A relay that keeps connections knows of an outage before anything is sent.
        if health.unreachableSince == nil, let since = relay.unreachableSince {
            health.unreachableSince = since
            health.problem = health.problem ?? "its connection is down"
        }
        // An unlock's catch-up under way counts as one: what it owes (a founding, shares kept while
        // locked) is not in the vault yet, and `queued: 0` must mean nothing is left to send.
        let queued = owners.held.reduce(0) { total, owner in
            total + (owner.read { $0.unconfirmedEntries.count + $0.owedDeliveries.count } ?? 0) + (owner.catchUps.isIdle ? 0 : 1)
        } + ((try? await vault.outboxCount()) ?? 0)
        let state = health.unreachableSince != nil ? "unreachable" : health.hasAnswered ? "reachable" : "connecting"
        let behind = health.behind.values.sorted { $0.account < $1.account }
        let conflicts = health.conflicts.values.sorted { $0.account < $1.account }
        return RelayStatus(state: state, since: health.unreachableSince, problem: health.problem, queued: queued,
                           behind: behind.isEmpty ? nil : behind, conflicts: conflicts.isEmpty ? nil : conflicts)
    }
}

/// What became of a publish.
enum PublishOutcome: Sendable, Equatable {
    /// Nothing is left waiting.
    case done
    /// The relay did not answer: everything waits in the vault.
    case unreachable
    /// Shares are owed that need the keys of a locked device; they go out at unlock.
    case waitingForUnlock
    /// The relay answers, but the log number this device's next entry needs is
    /// held by a record that does not verify (tampering, or a device this one
    /// cannot follow): the entry waits here, and is tried again at the next
    /// publish (a change to the account, an unlock, a start, the relay coming back).
    case blocked(seq: LogSeq)
    /// The relay service answered and refused (an identity token, a membership): nothing of it is stored there.
    case refused(RelayError)

    /// A sentence for a person, when something waits.
    var note: String? {
        switch self {
        case .done: return nil
        case .unreachable:
            return "the relay is unreachable: the new key is stored and served on this device, and reaches the other devices once the relay is back"
        case .waitingForUnlock:
            return "the new key is stored and served on this device; its deliveries go out once the account is unlocked"
        case .refused(let error):
            return "the new key is stored and served on this device; the relay service refused to take it on (\(error))"
        case .blocked(let seq):
            return "the relay answers, but its log entry \(seq) for this account does not verify (tampering, or an entry this device cannot follow): "
                + "the new key is stored and served on this device and is announced once the relay's log can be followed again"
        }
    }
}

/// Whether the relay answered last time, and since when it has not.
struct RelayHealth: Sendable {
    var unreachableSince: Date?
    var problem: String?
    var hasAnswered = false
    /// Accounts whose log entries the relay was found to lack, since the start.
    var behind: [AccountID: RelayBehind] = [:]
    /// Accounts on their own here whose ID the relay holds another circle for.
    var conflicts: [AccountID: RelayConflict] = [:]
}

/// What this device found missing on the relay: log entries it knows the
/// relay held once (a relay file deleted and made anew, a store restored from
/// an old backup), and whether it has published its copy of them again.
package struct RelayBehind: Sendable, Codable, Equatable {
    package var account: String
    /// The numbers of the missing log entries.
    package var missingEntries: [Int]
    package var since: Date
    /// This device published its copy of every missing entry again.
    package var republished: Bool
}

/// The relay as `status` shows it.
package struct RelayStatus: Sendable, Codable, Equatable {
    /// `connecting` (not heard from yet), `reachable` or `unreachable`.
    package var state: String
    package var since: Date?
    package var problem: String?
    /// Log entries, owed deliveries and records waiting for the relay.
    package var queued: Int
    /// Accounts whose confirmed log entries the relay was found to lack (absent when none).
    package var behind: [RelayBehind]?
    /// Accounts on their own here whose ID the relay holds another device's circle for (absent when none).
    package var conflicts: [RelayConflict]?
}

extension OutboxRecord {
    /// A version 2 pairing approval (a `challenge` row under the approval's label).
    var isPairingApproval: Bool {
        record.kind == .challenge && SignedEnvelope.label(of: record.body) == Labels.pairingApproval
    }
}
