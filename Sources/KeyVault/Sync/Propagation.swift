import Foundation
import Logging
import ServiceLifecycle

/// Propagation: reading the relay, verifying what it holds, taking in shares
/// and acknowledging them. The relay is untrusted: every record is verified
/// before it changes anything, and a refused one is logged and ignored.
extension KeyVaultService {
    /// Runs until cancelled: one pass at start (from the relay's beginning, so
    /// requests and acknowledgements are known again after a restart), then
    /// one pass per wake-up.
    public func propagate() async {
        guard let relay else { return }
        let wakeups = relay.wakeups()
        await sync()
        for await _ in wakeups.cancelOnGracefulShutdown() {
            await sync()
        }
    }

    /// One pass over what is new on the relay. Passes run one at a time.
    func sync() async {
        guard let relay else { return }
        await syncGate.acquire()
        defer { Task { await syncGate.release() } }
        do {
            while true {
                let cursor = relayCursor.withLock { $0 }
                let rows = try await relay.rows(after: cursor, limit: 500)
                guard let last = rows.last else { break }
                for row in rows { await process(row) }
                relayCursor.withLock { $0 = last.cursor }
            }
            for account in accounts.withLock({ Array($0.keys) }) { await advanceEnrollments(account) }
        } catch {
            logger.warning("relay read failed", metadata: ["problem": "\(error)"])
        }
    }

    private func process(_ row: RelayRow) async {
        let account = row.record.account
        guard accounts.withLock({ $0[account] != nil }) else { return }
        do {
            switch row.record.kind {
            case .log:
                try await adopt([try LogEntry.decode(row.record.body)], account: account)
            case .request:
                let request = try EnrollmentRequest.decode(row.record.body)
                guard request.account == account else { throw ProtocolError.invalid("a request filed under another account") }
                accounts.withLock { states in
                    guard let state = states[account], state.circle.isTrusted(state.deviceID),
                          state.circle.members[request.device.deviceID] == nil, state.circle.contains(hash: request.headHash) else { return }
                    states[account]?.requests[request.device.deviceID] = request
                }
            case .challenge:
                try noteChallenge(row.record.body, account: account)
            case .reveal:
                try noteReveal(row.record.body, account: account)
            case .share:
                guard row.record.recipient == accounts.withLock({ $0[account]?.deviceID }) else { return }
                try await takeShare(row.record.body, account: account)
            case .ack:
                let ack = try ShareAck.decode(row.record.body)
                try accounts.withLock { states in
                    // A removed device's word no longer counts, not even for what it held.
                    guard let member = states[account]?.circle.members[ack.deviceID], !member.revoked, ack.account == account else {
                        throw ProtocolError.untrustedSigner(ack.deviceID)
                    }
                    guard ack.isSigned(by: member.keys.signing) else { throw ProtocolError.badSignature("an acknowledgement") }
                    var entry = states[account]?.acks[ack.deviceID] ?? (generations: [:], lastSeen: .distantPast)
                    let at = Date(timeIntervalSince1970: Double(ack.receivedAt) / 1000)
                    entry.generations[ack.generation] = min(entry.generations[ack.generation] ?? at, at)
                    entry.lastSeen = max(entry.lastSeen, at)
                    states[account]?.acks[ack.deviceID] = entry
                }
                hub.wake(account, nil)
                // Outside this pass: promoting appends to the log, which may need a pass of its own.
                Task { await self.promoteIfAcknowledged(account) }
            }
        } catch {
            logger.warning("refused relay record", metadata: [
                "account": "\(account)", "kind": "\(row.record.kind.rawValue)", "cursor": "\(row.cursor)", "problem": "\(error)",
            ])
        }
    }

    /// A trusted device's challenge: the new device picks the first valid one
    /// for its request (and so its code); a trusted device remembers them all.
    private func noteChallenge(_ body: [UInt8], account: AccountID) throws {
        try accounts.withLock { states in
            guard var state = states[account] else { return }
            let circle = state.circle
            let challenge = try EnrollmentChallenge.decode(body) { circle.isTrusted($0) ? circle.members[$0]?.keys.signing : nil }
            guard challenge.account == account else { throw ProtocolError.invalid("a challenge filed under another account") }
            state.challenges[Hex.encode(challenge.hash)] = challenge
            if challenge.challenger == state.deviceID { state.challenged.insert(Hex.encode(challenge.requestHash)) }
            if let request = state.enrollment, let secret = state.pairingSecret, state.chosenChallenge == nil, challenge.requestHash == request.hash {
                state.chosenChallenge = challenge
                state.pairingCode = PairingCode.derive(requestHash: request.hash, challenge: challenge.nonce, secret: secret)
            }
            states[account] = state
        }
        hub.wake(account, nil)
    }

    /// The new device's reveal, checked against its request's commitment.
    private func noteReveal(_ body: [UInt8], account: AccountID) throws {
        try accounts.withLock { states in
            guard var state = states[account], let hash = EnrollmentReveal.requestHash(of: body),
                  let request = state.requests.values.first(where: { $0.hash == hash }) else { return }
            let reveal = try EnrollmentReveal.decode(body, request: request)
            guard state.challenges[Hex.encode(reveal.challengeHash)] != nil else { throw ProtocolError.invalid("a reveal for a challenge no trusted device made") }
            state.reveals[request.device.deviceID] = reveal
            states[account] = state
        }
    }

    static let maxOpenChallenges = 5

    /// Publishes what this device owes an enrollment: a challenge for each
    /// request it has not answered (trusted, unlocked), or its reveal (new device, unlocked).
    func advanceEnrollments(_ account: AccountID) async {
        guard let relay else { return }
        let (records, challengedHashes, revealed) = accounts.withLock { states -> ([RelayRecord], [String], Bool) in
            guard let state = states[account], let identity = state.identity else { return ([], [], false) }
            var records: [RelayRecord] = []
            var hashes: [String] = []
            if state.circle.isTrusted(state.deviceID) {
                // Each challenge is one more 1-in-a-million try for a relay that floods requests:
                // at most a few open ones per account.
                let open = state.requests.values.filter { state.challenged.contains(Hex.encode($0.hash)) }.count
                let unanswered = state.requests.values.filter { !state.challenged.contains(Hex.encode($0.hash)) }.sorted { $0.requestedAt < $1.requestedAt }
                for request in unanswered.prefix(max(0, Self.maxOpenChallenges - open)) {
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
        guard !records.isEmpty else { return }
        do {
            try await relay.publish(batch: records)
            accounts.withLock { states in
                states[account]?.challenged.formUnion(challengedHashes)
                if revealed { states[account]?.revealed = true }
            }
        } catch {
            logger.warning("relay write failed", metadata: ["problem": "\(error)"])
        }
    }

    /// Appends a log entry signed by this device on the current head. If another
    /// device took the number first, catches up and builds the entry again on
    /// the new head (`body` may answer nil: nothing left to do). Adopts it locally.
    func appendEntry(_ id: AccountID, _ body: (CircleState) throws -> LogEntry.Body?) async throws -> LogEntry? {
        guard let relay else { throw Refusal.invalid("this daemon has no relay") }
        for _ in 0..<5 {
            let state = try existing(id)
            guard let identity = state.identity else { throw Refusal.locked(id) }
            guard let content = try body(state.circle) else { return nil }
            let entry = LogEntry.make(account: id, seq: state.circle.nextSeq, previousHash: state.circle.headHash, signer: identity.signing,
                                      signerID: state.deviceID, body: content, at: now())
            do {
                try await relay.publish(.log(entry))
            } catch RelayError.logSeqTaken {
                await sync()
                continue
            }
            try await adopt([entry], account: id)
            return entry
        }
        throw Refusal(.error, "the circle log kept moving; try again")
    }

    /// Verifies log entries against the account's circle, stores them, and
    /// reacts to what they say about this device.
    func adopt(_ entries: [LogEntry], account: AccountID) async throws {
        let (accepted, becameMember) = try accounts.withLock { states -> ([LogEntry], Bool) in
            guard var state = states[account] else { return ([], false) }
            let wasMember = state.circle.isTrusted(state.deviceID)
            var accepted: [LogEntry] = []
            for entry in entries {
                let before = state.circle.nextSeq
                try state.circle.apply(entry)
                if state.circle.nextSeq > before { accepted.append(entry) }
            }
            let isMember = state.circle.isTrusted(state.deviceID)
            if isMember { state.requests = state.requests.filter { state.circle.members[$0.key] == nil } }
            states[account] = state
            return (accepted, isMember && !wasMember)
        }
        guard !accepted.isEmpty else { return }
        try await vault.appendLog(account: account, entries: accepted.map { ($0.seq, $0.encoded) })
        if accepted.contains(where: { $0.body == .destroy }) { try await shred(account) }
        for entry in accepted {
            if case .approve(let device, _) = entry.body { hub.wake(account, .deviceEnrolled(device.deviceID)) }
        }
        if becameMember {
            logger.notice("this device was approved", metadata: ["account": "\(account)"])
            hub.wake(account, nil)
        }
    }

    /// The circle destroyed the account: drop every key here, in the vault and in memory.
    func shred(_ account: AccountID) async throws {
        try await vault.destroyKeys(account: account)
        accounts.withLock { states in
            states[account]?.keys = [:]
            states[account]?.items.removeAll { $0.attributes.kind == .generationKey }
            if let count = states[account]?.generations.count {
                for i in 0..<count { states[account]?.generations[i].state = .destroyed }
            }
        }
        logger.notice("account destroyed everywhere: keys shredded", metadata: ["account": "\(account)"])
        hub.wake(account, AccountEvent(name: "destroyed", fields: [:]))
    }

    /// Re-reads every share addressed to this device (after an unlock).
    func takeShares(for account: AccountID) async {
        guard let relay, let me = accounts.withLock({ $0[account]?.deviceID }) else { return }
        do {
            for row in try await relay.all(.share, account: account) where row.record.recipient == me {
                do { try await takeShare(row.record.body, account: account) } catch {
                    logger.warning("refused relay record", metadata: ["account": "\(account)", "kind": "share", "cursor": "\(row.cursor)", "problem": "\(error)"])
                }
            }
        } catch {
            logger.warning("relay read failed", metadata: ["problem": "\(error)"])
        }
    }

    /// Opens one share, checks it against the circle, stores the key wrapped
    /// under this device's KEK, and acknowledges it. A locked device leaves it sealed.
    func takeShare(_ sealed: [UInt8], account: AccountID) async throws {
        guard let state = accounts.withLock({ $0[account] }) else { return }
        guard let identity = state.identity, let kek = state.kek else { return }  // locked: taken in at unlock
        let circle = state.circle
        let share = try KeyShare.open(sealed, with: identity.box) { sender in
            circle.isTrusted(sender) ? circle.members[sender]?.keys.signing : nil
        }
        let header = share.header
        guard header.account == account, header.recipient == state.deviceID else { throw ProtocolError.invalid("a share for someone else") }
        guard circle.generations.contains(where: { $0.generation == header.generation && $0.keyID == header.keyID }) else {
            throw ProtocolError.invalid("a share of generation \(header.generation) that the circle never announced with that key")
        }
        if let local = state.generations.first(where: { $0.number == header.generation }) {
            guard local.keyID != header.keyID else { return }  // already held
            // A key this device stored under that number but never announced: the circle gave the number to this one.
            try await dropOrphan(account, generation: header.generation)
        }
        let generation = KeyGeneration(number: header.generation, keyID: header.keyID, createdAt: header.createdAt, state: .active)
        let context = WrapContext(account: account, kind: .generationKey, generation: header.generation)
        let item = StoredItem(attributes: KeychainItem.make(account: account, kind: .generationKey, generation: header.generation,
                                                             accessibility: state.record.accessibility, at: now()),
                              wrapped: WrappedSecret.wrap(share.key.bytes, under: kek, context: context))
        let current = max(state.currentGeneration ?? 0, header.generation)
        try await vault.addGeneration(account: account, generation: generation, item: item, current: current)
        accounts.withLock { states in
            states[account]?.generations.append(generation)
            states[account]?.items.append(item)
            states[account]?.keys[header.generation] = share.key
            states[account]?.record.currentGeneration = current
            if states[account]?.circle.isTrusted(state.deviceID) == true { states[account]?.enrollment = nil }
        }
        logger.notice("key received", metadata: ["account": "\(account)", "generation": "\(header.generation)", "from": "\(header.sender)"])
        hub.wake(account, .keyReady(header.generation, header.keyID))
        if let relay {
            let ack = ShareAck.make(account: account, generation: header.generation, keyID: header.keyID, deviceID: state.deviceID, signer: identity.signing, at: now())
            try? await relay.publish(.ack(ack))
        }
    }
}
