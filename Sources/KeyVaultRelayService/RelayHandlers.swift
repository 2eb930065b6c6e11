import Foundation
import Hummingbird
import Logging
import NIOCore
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultRelayWire
import KeyVaultRelay
import KeyVaultRelayStore

/// The routes' work: check the signature against the account, decide with
/// `Authorization`, then touch the store. One instance per process; it holds
/// no state a device depends on beyond caches the store can rebuild.
final class RelayHandlers: Sendable {
    let relay: any RelayStore
    let state: any ServiceState
    let views: VerifiedViews
    let waiters: Waiters
    let identity: IdentityVerifier
    let breaker: StoreBreaker
    let recentNonces = RecentNonces()
    let indexedSigners = IndexedSigners()
    let work: AccountWork
    let metrics: RelayMetrics
    let logger: Logger

    static let maxBody = 1 << 20
    static let maxBatch = 1000
    static let maxWait = 60

    init(relay: any RelayStore, state: any ServiceState, identity: IdentityVerifier, metrics: RelayMetrics, logger: Logger) {
        self.relay = relay
        self.state = state
        self.views = VerifiedViews(relay: relay, logger: logger, metrics: metrics)
        self.waiters = Waiters(metrics: metrics)
        self.work = AccountWork(metrics: metrics)
        self.breaker = StoreBreaker(metrics: metrics)
        self.metrics = metrics
        self.identity = identity
        self.logger = logger
    }

    // MARK: Routes

    func health() async throws -> Response {
        try await store(.ping) { try await relay.ping() }
        return JSON.response(["state": "ready"])
    }

    /// `RelayWire.Candidacy` as the relay takes it: a missing token is answered as an identity failure.
    private struct CandidacyBody: Decodable {
        var signing: String
        var box: String
        var identityToken: String?
    }

    func candidacy(_ request: Request, account: String) async throws -> Response {
        let account = try Self.account(account)
        let now = Date()
        let (signed, body) = try await Self.signed(request, now: now)
        let candidacy = try JSON.decode(CandidacyBody.self, from: body)
        guard let signingBytes = Base64.decode(candidacy.signing), let boxBytes = Base64.decode(candidacy.box),
              let signing = try? SigningPublicKey(rawRepresentation: signingBytes),
              let box = try? BoxPublicKey(rawRepresentation: boxBytes) else {
            throw Refusal.invalid("signing and box must be 32-byte public keys in base64")
        }
        let deviceID = Candidate.deviceID(signing: signing, box: box)
        guard signed.keyID == deviceID else { throw Refusal.unsigned("keyid must be the device ID of the keys in the body") }
        guard signed.isValid(by: signing) else { throw Refusal.unsigned("the signature does not verify") }
        // No token (absent, null or empty) is an identity failure like a bad one, not a malformed body.
        guard let token = candidacy.identityToken, !token.isEmpty else { throw Refusal.identity("the candidacy carries no identity token") }
        try await identity.verify(token, account: account, signing: signing, box: box, now: now)
        try claimRecent(signed, account: account)
        let candidate = Candidate(account: account, signing: signing, box: box, filedAt: Self.millis(now))
        let filing = try await spending { try await store(.fileCandidacy) { try await state.file(candidate, spending: signed.nonce(for: account)) } }
        switch filing {
        case .filed(let evicted):
            // Its first requests follow at once (the pairing request): they find it here. Those it
            // evicted are forgotten here at once, and by other instances within `candidacyKept`.
            indexedSigners.remember(.candidate(signing, until: candidate.filedAt + Bounds.candidateLifeMillis), of: deviceID, account: account)
            for device in evicted { indexedSigners.forgetCandidacy(of: device, account: account) }
        case .tooMany(let retryAfter): throw Refusal.tooMany(retryAfter: retryAfter)
        }
        let exists = !(try await store(.circle) { try await views.circle(of: account) }.isEmpty)
        logger.info("candidate filed", metadata: ["account": "\(account)", "device": "\(deviceID)"])
        // Filings are bounded per hour, so this is where expired candidacies' requests go.
        await prune(account)
        return JSON.response(RelayWire.Candidate(candidate: deviceID.hex, accountExists: exists))
    }

    func publish(_ request: Request, account: String) async throws -> Response {
        let account = try Self.account(account)
        let (signed, body) = try await Self.signed(request, now: Date())
        let admission = try await admit(signed, account: account)
        // A signer the account knows takes a turn of its lane before the body is decoded; a device
        // only its batch's approval makes known takes one once that is checked (below).
        var lane = admission.verified ? try await lane(of: signed.keyID, account: account) : nil
        if let chosen = lane {
            try await work.take(account, chosen)
            // A request of the signer's that held the turn meanwhile may have brought the view a revocation:
            // a device no longer a member waits in the guests' lane, not the members'.
            if chosen == .members, let kept = await views.kept(account), Self.lane(of: signed.keyID, in: kept.circle) == .guests {
                work.give(account, chosen)
                lane = nil
                try await work.take(account, .guests)
                lane = .guests
            }
        }
        defer { if let lane { work.give(account, lane) } }
        let publish = try JSON.decode(RelayWire.Publish.self, from: body)
        guard (1...Self.maxBatch).contains(publish.records.count) else { throw Refusal.invalid("a batch holds 1 to 1,000 records") }
        var records: [RelayRecord] = []
        for wire in publish.records {
            guard let record = wire.record(account: account) else { throw Refusal.invalid("a record's kind or body is not valid") }
            guard record.body.count <= RelayRecord.maxBodyByteCount else {
                throw Refusal.invalid("a record's body is \(record.body.count) bytes; at most \(RelayRecord.maxBodyByteCount) are taken")
            }
            records.append(record)
        }
        let (circle, standing) = try await authenticate(signed, admission, account: account, batch: records)
        if lane == nil {
            try await work.take(account, .guests)
            lane = .guests
        }
        var ownRequests: [FiledRequest] = []
        if case .candidate = standing, records.contains(where: { $0.kind == .reveal }) {
            ownRequests = try await store(.requests) { try await relay.all(.request, account: account) }.compactMap { try? FiledRequest.decode($0.record.body) }
                .filter { $0.deviceID == signed.keyID }
        }
        let isCandidate: Bool
        switch standing {
        case .revoked: throw Refusal.forbidden
        case .candidate: isCandidate = true
        case .approvedInBatch:
            // Its approval, checked again below as the batch's first record, makes it a member for the rest.
            isCandidate = false
        case .member:
            // What only a candidate may send (a genesis, a request, a reveal) a member may not, whatever
            // candidacy it holds: no need to read the candidacies.
            isCandidate = false
        }
        let (toStore, extended) = try Authorization.publish(records, signer: signed.keyID, isCandidate: isCandidate, circle: circle, ownRequests: ownRequests)
        // The signer index first: once an entry is stored, the devices it admits are in the index.
        let admitted = toStore.compactMap { $0.kind == .log ? (try? LogEntry.decode($0.body))?.admits : nil }
        if !admitted.isEmpty {
            try await store(.signers) { try await state.index(admitted, account: account) }
        }
        if !toStore.isEmpty {
            let stored: StoredBatch
            do {
                stored = try await spending { try await store(.publish) { try await relay.publish(batch: toStore, spending: signed.nonce(for: account)) } }
            } catch RelayError.logSeqTaken(let seq) {
                throw Refusal.logSeqTaken(seq)
            }
            // The entries just stored were verified above: the account's view takes them as they are.
            await views.adopt(extended, extending: circle, stored: stored)
            // Our own readers at once, with the rows stored; then other instances, through the store's wake-up.
            waiters.stored(stored, path: .publish)
            relay.announce(stored)
            if toStore.contains(where: Retention.settlesSomething) { await prune(account, settling: toStore) }
        }
        return JSON.response(RelayWire.Published(stored: toStore.count))
    }

    func read(_ request: Request, account: String) async throws -> Response {
        let account = try Self.account(account)
        let query = request.uri.queryParameters
        // A parameter given twice has no one meaning (the router would take the first): refused.
        for name in ["after", "limit", "wait"] where query[values: name[...]].count > 1 {
            throw Refusal.invalid("\(name) is given more than once")
        }
        let after = RelayCursor(try Self.number(query["after"], "after", default: 0, in: 0...Int64.max))
        let limit = Int(try Self.number(query["limit"], "limit", default: 500, in: 1...Int64(Self.maxBatch)))
        let wait = try Self.number(query["wait"], "wait", default: 0, in: 0...Int64(Self.maxWait))
        let (signed, _) = try await Self.signed(request, now: Date())
        let admission = try await admit(signed, account: account)
        var (_, standing) = try await authenticate(signed, admission, account: account)
        var turn: AccountWork.Lane?
        defer { if let turn { work.give(account, turn) } }
        let deadline = ContinuousClock.now + .seconds(wait)
        var holding = false
        defer { if holding { waiters.release(account) } }
        // Up to here the store holds nothing more the reader may see, as it stands.
        var scanned = after
        // The account's view has just read the store (`authenticate`): a cursor it has read to was handed out.
        var cursorChecked = after == .start
        if !cursorChecked, let through = await views.kept(account)?.through, after <= through { cursorChecked = true }
        while true {
            if turn == nil {
                let lane = Self.lane(of: standing)
                try await work.take(account, lane)
                turn = lane
            }
            let mark = waiters.mark(account)
            // Rows past this the read may pass over as not the reader's to see, and one of them may
            // change what it may see: only a wake-up at or before it is one the read need not take.
            let readFrom = scanned
            let rows: [RelayRow]
            (rows, scanned) = try await visibleRows(account: account, after: scanned, limit: limit, reader: signed.keyID, standing: standing)
            // A cursor no store of this account handed out: the store went back (a restore). Said, so the
            // reader reads again from the start and checks what it knows is there (a held read would wait on).
            // Asked only when neither the account's view nor the page passed it: a row after it is one
            // the store handed out.
            if rows.isEmpty && !cursorChecked {
                let handedOut = try await store(.rows) { try await relay.handedOut(account: account) }
                if after > handedOut { throw Refusal.cursorAhead }
                cursorChecked = true
            }
            if !rows.isEmpty || ContinuousClock.now >= deadline || waiters.isDraining {
                return JSON.response(RelayWire.Rows(rows: rows.map(RelayWire.Row.init)))
            }
            // An account holds at most `perAccount` reads at once, whatever their addresses: past
            // that a read answers its (empty) page now, as at its deadline.
            if !holding {
                guard waiters.hold(account) else { return JSON.response(RelayWire.Rows(rows: [])) }
                holding = true
            }
            // A held read holds no turn: the account's other requests go on meanwhile.
            if let held = turn { work.give(account, held) }
            turn = nil
            let woke = await waiters.wait(account, after: mark, readThrough: readFrom, until: deadline)
            // Woken by a write on this instance that began where the reader had read to: its rows are
            // all that came since, and when the reader's standing after them is known here, they answer.
            if case .stored(let batch) = woke, batch.after <= scanned,
               let kept = await standingAfter(batch, of: signed.keyID, standing: standing),
               let page = Self.page(of: batch, after: scanned, limit: limit, reader: signed.keyID, standing: kept) {
                return JSON.response(RelayWire.Rows(rows: page.map(RelayWire.Row.init)))
            }
            // What woke the read may be the reader's own revocation (or approval): decide again
            // before answering with anything that landed since. Rows it could not see before it
            // may see now: read again from where it asked.
            guard let now = try await self.standing(of: signed.keyID, account: account).1 else { throw Refusal.forbidden }
            if now != standing { scanned = after }
            standing = now
        }
    }

    /// The reader's standing after `batch`, a write on this instance that began where the reader
    /// had read to, when it is known here unchanged; nil otherwise (the store decides). The
    /// account's view must have read the store through the write (it took the write's entries
    /// as it stored them, `VerifiedViews.adopt`): its circle then holds every entry up to the
    /// write, including any that landed between the reader's check and its read (a revocation,
    /// an approval), and a device's standing only moves one way (candidate, member, revoked),
    /// so the same standing then and now is the same throughout. A candidate's candidacy must be
    /// known live here too (`IndexedSigners.known`: read in the last seconds, its day not over).
    private func standingAfter(_ batch: StoredBatch, of reader: DeviceID, standing: Authorization.Standing) async -> Authorization.Standing? {
        guard let kept = await views.kept(batch.account), kept.through >= batch.through else { return nil }
        let known = Authorization.Standing.of(reader, circle: kept.circle, candidates: [])
        switch standing {
        case .member:
            return known == standing ? standing : nil
        case .candidate(let key):
            guard known == nil, case .candidate(key, _)? = indexedSigners.known(reader, account: batch.account, now: Self.millis(Date())) else { return nil }
            return standing
        case .revoked, .approvedInBatch:
            return nil
        }
    }

    // MARK: Checks

    /// What the signed head says of its signer, once the body is whole: the key the account knows
    /// the signer by (its signer index or a live candidacy), and whether the signature verifies by it
    /// (one verification either way, against a key nobody holds when there is none). Only a verified
    /// request takes one of the account's turns (`AccountWork`), so a stranger naming the account
    /// takes none, and a slow body holds none.
    private struct Admission {
        let key: SigningPublicKey?
        /// The key, when a live candidacy gave it (`authenticate` reads it again only if this
        /// instance no longer knows it live).
        let candidacy: SigningPublicKey?
        let verified: Bool
        /// How long these checks took: a refusal counts its fixed time from their start, as
        /// though `authenticate`'s checks followed them at once (`authenticate`).
        let spent: Duration
    }

    private func admit(_ signed: SignedRequest, account: AccountID) async throws -> Admission {
        let started = ContinuousClock.now
        let known = try await indexedKey(of: signed.keyID, account: account)
        let key = known?.key
        let candidacy: SigningPublicKey? = if case .candidate(let filed, _)? = known { filed } else { nil }
        let verifies = signed.isValid(by: key ?? Self.nobodysKey)
        return Admission(key: key, candidacy: candidacy, verified: key != nil && verifies, spent: ContinuousClock.now - started)
    }

    /// The lane of the account's turns a signer's work takes: members their own, candidates and
    /// revoked devices the guests' (one turn), so neither can take the members' turns. Decided on
    /// the account's view as kept here, without reading the store (the request is checked against
    /// the store's circle once it has its turn): a device another instance revoked a moment ago may
    /// take one turn of the members' lane before this instance's view has its revocation.
    private func lane(of keyID: DeviceID, account: AccountID) async throws -> AccountWork.Lane {
        let circle = if let kept = await views.kept(account) { kept.circle } else { try await store(.circle) { try await views.circle(of: account) } }
        return Self.lane(of: keyID, in: circle)
    }

    /// The lane `keyID` takes by what `circle` says of it (a candidacy, not in the circle, is a guest's).
    private static func lane(of keyID: DeviceID, in circle: CircleState) -> AccountWork.Lane {
        lane(of: Authorization.Standing.of(keyID, circle: circle, candidates: []))
    }

    private static func lane(of standing: Authorization.Standing?) -> AccountWork.Lane {
        if case .member? = standing { return .members }
        return .guests
    }

    /// The signer's standing in the account, its signature checked and its nonce new to this instance.
    ///
    /// Whether the account knows the signer, and by which key, is decided before any of its log
    /// is read (issue 33): from the signer index and the live candidacies (`admit`), in the same
    /// statements whatever the account's log holds and whether there is an account at all, and one
    /// signature verified either way (against a key nobody holds when there is none). An account that
    /// does not exist, a signer it does not know, and a signature that does not verify are one answer
    /// (`forbidden`), sent a fixed time after the checks began. Only a signer the account knows
    /// makes its circle be read (and built, when cold).
    ///
    /// A refusal goes out `refusalTime` after the checks began, counting `admit`'s and these
    /// back to back and leaving out the decoding between them (whose time the sender chooses):
    /// whether the signer index answered from memory or from the store, and whether a re-joined
    /// device's approval was checked, is spent within it.
    private func authenticate(_ signed: SignedRequest, _ admission: Admission, account: AccountID,
                              batch: [RelayRecord] = []) async throws -> (CircleState, Authorization.Standing) {
        let started = ContinuousClock.now - admission.spent
        var known = admission.key
        var verifies = admission.verified
        // (`admit` verified against a key nobody holds already: a stranger's request costs one verification.)
        if known == nil, let rejoined = try await rejoinedKey(of: signed.keyID, account: account, batch: batch) {
            known = rejoined
            verifies = signed.isValid(by: rejoined)
        }
        guard let known, verifies else { try await refuse(since: started) }
        var (circle, standing) = try await standing(of: signed.keyID, account: account, candidacy: admission.candidacy)
        if standing == nil { standing = Authorization.Standing.approvedInBatch(signed.keyID, records: batch, circle: circle) }
        // The index may hold a device whose batch then failed, or a candidacy that just ended: the circle decides.
        guard let standing, standing.key == known else { try await refuse(since: started) }
        try claimRecent(signed, account: account)
        return (circle, standing)
    }

    /// `forbidden`, at `refusalTime` after `started`: what is left to tell refusals apart is the store's
    /// own time (a row more or less), and that is spent within it.
    private func refuse(since started: ContinuousClock.Instant) async throws -> Never {
        try? await Task.sleep(until: started + Self.refusalTime, clock: .continuous)
        throw Refusal.forbidden
    }

    /// The signing key the account knows `keyID` by, before any of its log is read: its signer index
    /// (remembered here once seen) or a live candidacy. nil: a stranger to the account, or no account.
    private func indexedKey(of keyID: DeviceID, account: AccountID) async throws -> KnownSigner? {
        let now = Self.millis(Date())
        if let known = indexedSigners.known(keyID, account: account, now: now) { return known }
        let known = try await store(.signers, { try await state.signer(keyID, account: account, now: now) })
        if let known { indexedSigners.remember(known, of: keyID, account: account) }
        return known
    }

    /// For a device a recovery kit's member re-joined (`Standing.approvedInBatch`), which no index holds
    /// yet: the key the approval its batch opens with gives it, that approval signed by a signer the
    /// index holds (checked here). nil otherwise.
    private func rejoinedKey(of keyID: DeviceID, account: AccountID, batch: [RelayRecord]) async throws -> SigningPublicKey? {
        let now = Self.millis(Date())
        guard let first = batch.first, first.kind == .log, let entry = try? LogEntry.decode(first.body),
              case .approve(let device, _) = entry.body, device.deviceID == keyID,
              case .indexed(let approver)? = try await store(.signers, { try await state.signer(entry.signer, account: account, now: now) }),
              approver.isValidSignature(entry.signature, for: entry.signedBytes) else { return nil }
        return device.signing
    }

    /// When a `forbidden` refusal goes out, after its checks began: longer than they take on a
    /// healthy store, so the answer's time does not depend on what they found.
    static let refusalTime: Duration = .milliseconds(20)

    /// A key no request is signed with: what a signature from a signer the account does not know is checked against.
    private static let nobodysKey = SigningKey.generate().publicKey

    /// The key's standing in the account as the store says now (nil: nobody it knows): the
    /// candidates are read only when the circle does not know the key.
    private func standing(of keyID: DeviceID, account: AccountID, candidacy: SigningPublicKey? = nil) async throws -> (CircleState, Authorization.Standing?) {
        let circle = try await store(.circle) { try await views.circle(of: account) }
        if let standing = Authorization.Standing.of(keyID, circle: circle, candidates: []) { return (circle, standing) }
        // A candidacy the request's admission read is not read again while it is known live here
        // (`IndexedSigners.known`); the request may have waited for its turn since.
        if let candidacy, case .candidate(candidacy, _)? = indexedSigners.known(keyID, account: account, now: Self.millis(Date())) {
            return (circle, .candidate(candidacy))
        }
        let candidates = try await store(.candidates) { try await state.candidates(account: account, now: Self.millis(Date())) }
        return (circle, Authorization.Standing.of(keyID, circle: circle, candidates: candidates))
    }

    /// Removes what no device needs any more (RELAY.md "Retention"), judging only what
    /// `settling` (the records just stored; none for a candidacy) can have settled: the
    /// account's enrollment rows and acks (few: enrollments are pruned, acks are one per
    /// device and key), and the shares to each device an ack or a revocation names, deleted
    /// by recipient without being read. Never every row of the account. The batch that made
    /// it so is already stored, so a failure here is logged and tried again next time.
    ///
    /// The account's last cursor is read first, and the circle and candidates after it: a
    /// share is stored with (or after) the announce of the key it carries, so every share
    /// up to that cursor has its announce in that circle, and a device that has not
    /// acknowledged that key keeps it, whatever batch lands meanwhile. Nothing past that
    /// cursor is judged.
    private func prune(_ account: AccountID, settling: [RelayRecord] = []) async {
        do {
            let through = try await store(.rows) { try await relay.lastCursor(account: account) }
            let rows = try await store(.rows) {
                try await relay.rows(account: account, kinds: [.request, .challenge, .reveal, .ack], through: through)
            }
            metrics.pruneRowsRead.increment(by: Int64(rows.count))
            let circle = try await store(.circle) { try await views.circle(of: account) }
            let candidates = try await store(.candidates) { try await state.candidates(account: account, now: Self.millis(Date())) }
            let removable = Retention.removable(rows, circle: circle, liveCandidates: Set(candidates.map(\.deviceID)))
            if !removable.isEmpty {
                try await store(.remove) { try await relay.remove(account: account, cursors: removable) }
            }
            var shares = 0
            for recipient in Retention.shareRecipients(settledBy: settling) where Retention.sharesSettled(to: recipient, circle: circle, rows: rows) {
                shares += try await store(.remove) { try await relay.removeShares(account: account, recipient: recipient, through: through) }
            }
            if !removable.isEmpty || shares > 0 {
                logger.debug("pruned", metadata: ["account": "\(account)", "rows": "\(removable.count + shares)"])
            }
        } catch {
            logger.warning("could not prune", metadata: ["account": "\(account)", "problem": "\(PostgresRelay.reason(error))"])
        }
    }

    /// Refuses a nonce this instance accepted within its life, with no write to the store: what
    /// protects a read (a write's nonce is spent again, durably, in the write's transaction).
    private func claimRecent(_ signed: SignedRequest, account: AccountID) throws(Refusal) {
        let key = RecentNonces.Key(account: account, keyID: signed.keyID, nonce: signed.signature.nonce)
        guard recentNonces.claim(key, now: Int64(Date().timeIntervalSince1970)) else { throw Self.nonceUsed }
    }

    /// A write whose nonce the store says was spent (on any instance) is refused as a replay.
    private func spending<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch RelayError.nonceSpent {
            throw Self.nonceUsed
        }
    }

    static let nonceUsed = Refusal.unsigned("the nonce was used before")

    /// The rows the reader may see after `after`, skipping past rows it may not see: a page of
    /// at most `limit` rows and `pageBytes` bytes of bodies (always at least one row). With none,
    /// the cursor up to which the store held nothing more it may see.
    private func visibleRows(account: AccountID, after: RelayCursor, limit: Int, reader: DeviceID,
                             standing: Authorization.Standing) async throws -> (rows: [RelayRow], scanned: RelayCursor) {
        var cursor = after
        while true {
            let rows = try await store(.rows) { try await relay.rows(account: account, after: cursor, limit: limit, byteBudget: Self.pageBytes) }
            let visible = rows.filter { Authorization.mayRead($0.record, reader: reader, standing: standing) }
            // A page ends at `limit` rows or at the byte budget: past rows it may not see, read on until one ends empty.
            guard visible.isEmpty, let last = rows.last else { return (visible, cursor) }
            cursor = last.cursor
        }
    }

    /// A held read's answer from the rows a write on this instance stored, without asking the
    /// store: only if the reader had seen every row up to where the write began (`scanned`
    /// at or past `batch.after`), so these rows are all that came after. Nil when they are not
    /// enough to answer (rows before them unseen, or none the reader may see): the store decides.
    /// The page is cut as `visibleRows` cuts one: at most `limit` rows and `pageBytes` of bodies.
    static func page(of batch: StoredBatch, after scanned: RelayCursor, limit: Int, reader: DeviceID,
                     standing: Authorization.Standing) -> [RelayRow]? {
        guard batch.after <= scanned else { return nil }
        let visible = batch.rows.filter { $0.cursor > scanned && Authorization.mayRead($0.record, reader: reader, standing: standing) }
        guard !visible.isEmpty else { return nil }
        let page = visible.prefix(limit)
        return Array(page.prefix(PageBytes.fitting(page.map(\.record.body.count), byteBudget: pageBytes)))
    }

    /// The most bytes of record bodies one answer holds (RELAY.md): 40 readers that never read hold
    /// 40 such pages, not 40 times 1,000 rows of 64 KiB.
    static let pageBytes = 1 << 20

    /// One use of the store, through the breaker: refused at once while the store fails (but for a
    /// probe a second); an error that is not the store's own answer marks it failing. Its time, whatever
    /// the outcome, goes to the metrics under `operation`.
    private func store<T>(_ operation: RelayMetrics.StoreOperation, _ body: () async throws -> T) async throws -> T {
        guard breaker.admit() else { throw Refusal.unavailable }
        let started = ContinuousClock.now
        defer { metrics.store(operation, took: ContinuousClock.now - started) }
        do {
            let value = try await body()
            breaker.reached()
            return value
        } catch let error as RelayError where error.isAnswer {
            // The store answered (a taken log number, a spent nonce, an error of its own such as one
            // shard not answering): it is there, so other requests, other accounts', still go to it.
            breaker.reached()
            throw error
        } catch is CancellationError {
            breaker.abandoned()
            throw CancellationError()
        } catch {
            breaker.failed()
            throw error
        }
    }

    // MARK: Parsing

    /// The request's signed head, checked before its body is read, and then the whole body, which
    /// must be the one the head's digest names.
    private static func signed(_ request: Request, now: Date) async throws -> (SignedRequest, [UInt8]) {
        let signed = try SignedRequest.parse(method: request.method.rawValue, target: request.head.path ?? "/",
                                             headers: request.headers, now: Int64(now.timeIntervalSince1970))
        let buffer = try await request.body.collect(upTo: maxBody)
        let body = Array(buffer.readableBytesView)
        try signed.checkBody(body)
        return (signed, body)
    }

    private static func account(_ raw: String) throws(Refusal) -> AccountID {
        guard let account = try? AccountID(validating: raw) else { throw .invalid("the account ID is not valid") }
        return account
    }

    private static func number(_ text: Substring?, _ name: String, default value: Int64, in range: ClosedRange<Int64>) throws(Refusal) -> Int64 {
        guard let text else { return value }
        guard let number = Int64(text), range.contains(number) else { throw .invalid("\(name) must be a whole number in \(range.lowerBound)...\(range.upperBound)") }
        return number
    }

    static func millis(_ date: Date) -> Int64 { Int64(date.timeIntervalSince1970 * 1000) }
}
