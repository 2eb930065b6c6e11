package import Foundation
import KeyVaultPolicy
import Logging
package import KeyVaultCrypto
package import KeyVaultProtocol
import KeyVaultAccount
import KeyVaultVault
import KeyVaultRelay

/// Enrollment: a new device asks to join (`enroll`), a trusted device lists
/// the requests and approves one with the pairing code both screens show.
package struct Enrollments: Sendable {
    package let service: KeyVaultService
    let vault: Vault
    let policy: PolicyStore
    let logger: Logger
    let now: @Sendable () -> Date
    package let owners: AccountOwners
    let pairings: PairingExchanges
    let relay: (any Relay)?
    let hub: WaitingHub
    let relayCredentials: RelayCredentials?

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
        relayCredentials = service.relayCredentials
    }

    package struct EnrollmentTicket: Sendable {
        package var deviceID: DeviceID
        /// The code the person types on a trusted device, shown at once (pairing version 2).
        package var pairingCode: String?
        package var since: Date
    }

    package struct EnrollmentListing: Sendable, Codable {
        package var deviceId: DeviceID
        package var deviceName: String
        package var requestedAt: Date
        /// 2; 1 for a device that asked with the retired pairing version and must update first.
        package var pairingVersion: Int
        /// What the person must do before this request can be approved (version 1 only).
        package var problem: String?
    }

    static func retiredPairing(_ device: DeviceKeys) -> String {
        "device \(device.deviceID) (\(device.name)) asked to join with pairing version 1, which is retired: update keyvaultd on that device and enroll it again"
    }

    package struct DeviceListing: Sendable, Codable {
        package var deviceId: DeviceID
        package var deviceName: String
        package var status: String
        package var lastSeen: Date?
        package var generations: [Generation]
        /// When the device acknowledged each generation it holds, by key ID.
        package var acknowledged: [String: Date]
    }


    /// On a new device: make this device's identity for the account, publish
    /// a signed request with its half of the pairing exchange, and answer with
    /// the pairing code at once (docs/PAIRING.md). Asking again while the
    /// exchange waits answers the same code; after it failed (or a restart
    /// ended it), asking again makes a new request with a new code.
    package func enroll(_ id: AccountID, passphrase: SecureBytes, deviceName: String, identityToken: String? = nil) async throws -> EnrollmentTicket {
        guard let relay else { throw Refusal.invalid("this daemon has no relay (--relay): a device can only join an account through one") }
        // Asked again: the relay is read first (outside the line), so a response that landed while the
        // passes were behind (the trusted device answered, then crashed) is taken, and the same code is
        // answered only while nothing has answered it.
        if owners.read(id, { $0.enrollment.isJoining }) == true { await service.propagation.sync(id) }
        return try await owners.run(id) {
            if let state = owners.state(id) {
                guard state.enrollment.isJoining else { throw Refusal.invalid("the account \(id) is already on this device") }
                if let code = state.enrollment.pairingCode, state.enrollment.progress == .awaitingResponse {
                    return EnrollmentTicket(deviceID: state.deviceID, pairingCode: code, since: state.enrollment.joiningSince)
                }
                return try await renewEnrollment(id, state: state, passphrase: passphrase)
            }
            try service.requireIdentityToken(identityToken, for: "enrolling")
            // A relay service shows the circle only to a candidate: this device's identity, with the
            // person's sign-in, becomes one when it first reads (and the token is dropped after).
            let identity = relayCredentials != nil ? service.preparedIdentity(for: id) : DeviceIdentity.generate()
            var installed = false
            service.signRelayRequests(id, as: identity)
            relayCredentials?.present(identityToken: identityToken, for: id)
            defer {
                relayCredentials?.present(identityToken: nil, for: id)
                if !installed { service.signRelayRequests(id, as: nil) }
            }
            // The circle as the relay shows it now. It is not trusted yet: the exchange checks
            // its genesis against the one the trusted device that knew the code sees.
            let circle = try await circleOnRelay(id, relay)

            let parameters = policy.current.kdf
            let salt = Random.bytes(KDFParameters.saltByteCount)
            let kek = try await KDFRunner.deriveKEK(passphrase: passphrase, salt: salt, parameters: parameters)
            let created = Millis.whole(now())  // to the millisecond, as the vault reads it back
            let keys = DeviceKeys(signing: identity.signing.publicKey, box: identity.box.publicKey, name: deviceName)
            let code = Pairing.drawCode()
            let started = try PairingRequest.make(account: id, device: keys, signer: identity.signing, code: code,
                                                  headHash: circle.headHash, at: created)
            let request = started.request
            let items = [(ItemKind.deviceSigningKey, identity.signing.seed), (.deviceBoxKey, identity.box.secret)].map { kind, bytes in
                StoredItem(attributes: KeychainItem.make(account: id, kind: kind, generation: 0, accessibility: .whenUnlocked, at: created),
                           wrapped: WrappedSecret.wrap(bytes, under: kek, context: WrapContext(account: id, kind: kind, generation: 0)))
            }
            var record = AccountRecord(
                id: id, createdAt: created, kdf: parameters, salt: salt, accessibility: .whenUnlocked, deviceID: identity.deviceID,
                signingPublicKey: identity.signing.publicKey, boxPublicKey: identity.box.publicKey, currentGeneration: nil,
                failedUnlocks: 0, backoffUntil: Date(timeIntervalSince1970: 0))
            record.deviceName = deviceName
            let snapshot = AccountSnapshot(account: record, generations: [], items: items,
                                           circleLog: circle.entries.map(\.encoded), enrollment: request.encoded,
                                           logConfirmed: circle.entries.count)
            // The request goes out from the outbox, stored with the account: a crash at any point
            // leaves no device or one whose request is sent at its next start (and whose exchange,
            // held in memory, ended: it asks again for a new code).
            try await vault.insert(snapshot, enqueue: [.request(request)])
            var state = AccountState(snapshot: snapshot)
            state.handle(.opened(kek: kek, identity: identity, keys: [:]), now: now())
            state.handle(.requestedToJoin(request, code: code), now: now())
            pairings.keep(started.takeInitiator(), for: id)
            service.install(id, state)
            installed = true
            service.spendIdentity(for: id)
            await service.publishing.publishQueued(id)
            logger.info("enrollment requested", metadata: ["account": "\(id)", "device": "\(identity.deviceID)"])
            return EnrollmentTicket(deviceID: identity.deviceID, pairingCode: code, since: request.requestedDate)
        }
    }

    /// A new request, with a new code, from a joining device whose exchange failed or ended.
    /// Nothing it was shown is trusted yet, so it reads the relay's log afresh: a circle a relay
    /// made up for it before is dropped if the relay now shows another.
    private func renewEnrollment(_ id: AccountID, state: AccountState, passphrase: SecureBytes) async throws -> EnrollmentTicket {
        guard let relay else { throw Refusal.invalid("this daemon has no relay") }
        guard let identity = state.identity, !state.isLocked else { throw Refusal.locked(id) }
        let circle = try await circleOnRelay(id, relay)
        if circle.entries.map(\.hash) != state.circle.entries.map(\.hash) {
            logger.warning("the relay shows another circle than before; reading it afresh", metadata: ["account": "\(id)"])
            // Reading starts again first: if either step fails, the next request compares the circles again and redoes both.
            try await service.relayAudit.restartReading(id)
            try await service.perform(id, .circleReadAfresh(circle))
        }
        let code = Pairing.drawCode()
        let name = state.record.deviceName
        let keys = DeviceKeys(signing: identity.signing.publicKey, box: identity.box.publicKey, name: name)
        let started = try PairingRequest.make(account: id, device: keys, signer: identity.signing, code: code,
                                              headHash: circle.headHash, at: now())
        let request = started.request
        try await vault.renewEnrollment(account: id, request: request.encoded, enqueue: .request(request))
        pairings.keep(started.takeInitiator(), for: id)
        service.update(id, .requestedToJoin(request, code: code))
        await service.publishing.publishQueued(id)
        logger.info("enrollment requested again", metadata: ["account": "\(id)", "device": "\(state.deviceID)"])
        return EnrollmentTicket(deviceID: state.deviceID, pairingCode: code, since: request.requestedDate)
    }

    /// The account's log as the relay shows it, each entry verified (one that is not is logged and
    /// skipped); `unknown` if there is none: a device can only join an account that exists.
    private func circleOnRelay(_ id: AccountID, _ relay: any Relay) async throws -> CircleState {
        let circle = try await readCircle(id, relay)
        guard !circle.isEmpty else {
            throw Refusal(.unknown, "the relay knows no account \(id): create it on its first device; if it exists on a device that had no relay, "
                + "give that device this relay and unlock the account there (its circle is founded on the relay then; on a relay service, "
                + "`keyvault account found` with the person's sign-in)")
        }
        return circle
    }

    /// The account's circle as the relay's log rows verify, from cursor 0 (entries that do not verify are skipped and logged).
    func readCircle(_ id: AccountID, _ relay: any Relay) async throws -> CircleState {
        var circle = CircleState(account: id)
        for row in try await relay.all(.log, account: id) {
            guard let entry = try? LogEntry.decode(row.record.body) else { continue }
            do { try circle.apply(entry) } catch { logger.warning("refused relay record", metadata: ["account": "\(id)", "problem": "\(error)"]) }
        }
        return circle
    }

    /// Requests that this device may approve: live (not dismissed, not expired, not tried here).
    package func enrollments(_ id: AccountID) throws -> [EnrollmentListing] {
        let state = try service.existing(id)
        // A device with no relay has no circle to join: no one can be asking.
        if relay == nil && state.circle.isEmpty { return [] }
        if state.circle.isEmpty && !state.enrollment.isJoining {
            throw Refusal.invalid("the account \(id) has no circle on the relay yet, so no device can ask to join it: "
                + (relayCredentials == nil ? "unlock it on this device to found it there" : "found it with `keyvault account found` and the person's sign-in"))
        }
        guard state.circle.isTrusted(state.deviceID) else { throw Refusal.invalid("this device is not (yet) trusted in the circle of \(id)") }
        let current = state.enrollment.live(at: now(), lifetime: requestLifetime).map {
            EnrollmentListing(deviceId: $0.device.deviceID, deviceName: $0.device.name, requestedAt: $0.requestedDate, pairingVersion: 2)
        }
        let retired = state.enrollment.retiredLive(at: now(), lifetime: requestLifetime).map {
            EnrollmentListing(deviceId: $0.device.deviceID, deviceName: $0.device.name, requestedAt: $0.requestedAt, pairingVersion: 1,
                              problem: Self.retiredPairing($0.device))
        }
        return (current + retired).sorted { ($0.requestedAt, $0.deviceId) < ($1.requestedAt, $1.deviceId) }
    }

    /// How long the approving device waits for the new device's confirmation.
    static let confirmationWait: Double = 30

    /// The person typed the code shown on the new device: this device answers the
    /// request's exchange with it, waits for the new device's confirmation, and
    /// only when it verifies approves exactly that device, authenticates the
    /// approval under the exchange's key, and delivers every live generation.
    package func approve(_ id: AccountID, deviceID: DeviceID, pairingCode: String) async throws -> String {
        guard relay != nil else { throw Refusal.invalid("this daemon has no relay") }
        guard Pairing.isCode(pairingCode) else { throw Refusal.invalid("a pairing code is six digits") }
        // The relay read first and outside the account's line, as a rotation's (issue 34), after
        // what followed an unlock: every key held goes to the new device.
        await owners.caughtUp(id)
        await service.propagation.sync(id)
        let (response, request) = try await owners.run(id) { () async throws -> (PairingResponse, PairingRequest) in
            let state = try service.existing(id)
            guard let identity = state.identity, !state.isLocked else { throw Refusal.locked(id) }
            guard state.circle.isTrusted(state.deviceID) else { throw Refusal.invalid("this device is not trusted in the circle of \(id)") }
            let request: PairingRequest
            switch state.enrollment.answer(for: deviceID, at: now(), lifetime: requestLifetime) {
            case .unknown:
                throw Refusal(.unknown, "no pending enrollment request from device \(deviceID) (it never came, expired, or was dismissed)")
            case .alreadyTried:
                throw Refusal(.denied, "this request's pairing code was already tried here; enroll the new device again for a new code")
            case .retired(let device):
                throw Refusal.invalid(Self.retiredPairing(device))
            case .respond(let pending):
                request = pending
            }
            // The new device answered another response already: this code is not spent on one it will ignore.
            if state.enrollment.answeredAnother(to: request.hash) { throw answeredElsewhere(id, deviceID) }
            let started = try PairingResponse.make(to: request, code: pairingCode, responder: state.deviceID, signer: identity.signing,
                                                   circle: state.circle)
            let response = started.response
            pairings.keep(started.takeResponder(), for: id, device: deviceID)
            service.update(id, .responded(to: request))
            return (response, request)
        }
        // Sent once the job ends, outside the account's line, and before the wait's clock starts: the new
        // device has the whole wait to answer (queued if the relay is away; the wait then ends unanswered).
        await service.publishing.deliver([OwedRecord(record: .challenge(response), outboxID: nil)], account: id)
        // The new device confirms in its own time; its confirmation arrives through this account's relay passes.
        let outcome = await waitForConfirmation(id, of: response)
        // Locked and unlocked during the wait: the keys kept meanwhile are taken before the new device's are counted.
        await owners.caughtUp(id)
        let approved = try await owners.run(id) { () async throws -> Approved in
            guard let responder = pairings.takeResponder(for: id, device: deviceID) else {
                throw Refusal(.denied, "this request's pairing code was already tried here; enroll the new device again for a new code")
            }
            let confirmation: PairingConfirmation
            switch outcome {
            case .confirmed(let confirmed): confirmation = confirmed
            case .answeredAnother:
                throw answeredElsewhere(id, deviceID)
            case .noAnswer:
                logger.warning("no pairing confirmation", metadata: ["account": "\(id)", "device": "\(deviceID)"])
                hub.announce(id, .pairingFailed(deviceID, reason: "no-answer"))
                throw Refusal.invalid("the new device did not answer within \(Int(Self.confirmationWait)) seconds; enroll it again for a new code")
            }
            guard let sessionKey = Pairing.complete(confirmation, responder: responder) else {
                logger.warning("pairing code did not match", metadata: ["account": "\(id)", "device": "\(deviceID)"])
                hub.announce(id, .pairingFailed(deviceID, reason: "code-mismatch"))
                throw Refusal(.denied, "the pairing code did not match; enroll the new device again for a new code")
            }
            let state = try service.existing(id)
            guard let identity = state.identity, !state.isLocked else { throw Refusal.locked(id) }
            // The request answered, even if the device has asked again since: it confirmed this exchange, and
            // keeps it beside its new one until an approval of either comes (docs/PAIRING.md).
            guard !state.enrollment.dismissed.contains(deviceID), state.enrollment.holdsRequest(from: deviceID) else {
                throw Refusal(.unknown, "the request from device \(deviceID) is gone")
            }
            // Every generation this device holds goes to the new device with the approval, in one relay write.
            let owed = state.knownGenerations.filter { state.heldKey($0.keyID) != nil }.map { OwedDelivery(keyID: $0.keyID, recipient: deviceID) }
            // The approval goes into the outbox with the entry, in its transaction: a crash cannot leave an
            // approve entry whose approval (the new device's only proof it is authentic) never goes out.
            guard let genesisHash = state.circle.entries.first?.hash else { throw Refusal.invalid("this device has no circle") }
            let appended = try await service.publishing.appendEntry(id, owe: owed, enqueue: { entry in
                [.challenge(PairingApproval.make(entry: entry, request: request, genesisHash: genesisHash, sessionKey: sessionKey, signer: identity.signing))]
            }) { _ in
                .approve(device: request.device, requestHash: request.hash)
            }
            return Approved(request: request, entryHash: appended?.hash, genesisHash: genesisHash, sessionKey: sessionKey)
        }
        // The entry, its shares and its approval go out after the job, outside the account's line.
        await service.publishing.publishOutsideLine(id)
        // Rebased after another device's entry: the approval of the entry as the relay now holds it follows.
        let rebased = try await owners.run(id) { () async throws -> Bool in
            guard let after = owners.state(id),
                  let entry = after.circle.entries.last(where: { entry in
                      if case .approve(let device, let hash) = entry.body { return device == approved.request.device && hash == approved.request.hash }
                      return false
                  }), entry.hash != approved.entryHash else { return false }
            // Signed with the identity held now: locked since the entry's job, nothing is signed (the
            // new device's request expires and it enrolls again).
            guard let identity = after.identity else {
                logger.warning("the approval of a rebased approve entry was not made: the account was locked", metadata: ["account": "\(id)"])
                return false
            }
            let approval = PairingApproval.make(entry: entry, request: approved.request, genesisHash: approved.genesisHash,
                                                sessionKey: approved.sessionKey, signer: identity.signing)
            _ = try await vault.enqueue(account: id, records: [.challenge(approval)])
            return true
        }
        if rebased { await service.publishing.publishOutsideLine(id) }
        logger.notice("device approved", metadata: ["account": "\(id)", "device": "\(deviceID)"])
        return approved.request.device.name
    }

    /// What an approval's job appended, for the publish after it, and what an approval of the
    /// entry a rebase rewrote needs besides the signing key (taken from the state held then).
    private struct Approved: Sendable {
        let request: PairingRequest
        let entryHash: LogHash?
        let genesisHash: LogHash
        let sessionKey: CPace.SessionKey
    }

    /// How an approval's wait for the new device's confirmation ended.
    enum ConfirmationOutcome: Sendable {
        case confirmed(PairingConfirmation)
        /// It answered another response to the same request: no confirmation of this one can come.
        case answeredAnother
        case noAnswer
    }

    /// The new device answered another response to its request: said, and the event sent.
    private func answeredElsewhere(_ id: AccountID, _ deviceID: DeviceID) -> Refusal {
        logger.warning("the new device answered another response", metadata: ["account": "\(id)", "device": "\(deviceID)"])
        hub.announce(id, .pairingFailed(deviceID, reason: "answered-elsewhere"))
        return Refusal.invalid("the new device answered another response to its request (another trusted device's, which approves it, "
            + "or this device's from before its daemon restarted, which cannot): unless another device approves it, enroll it again for a new code")
    }

    /// Waits (outside the account's line) until the account's passes have read the new
    /// device's confirmation of `response`, or of another response to its request, or the wait ends.
    private func waitForConfirmation(_ id: AccountID, of response: PairingResponse) async -> ConfirmationOutcome {
        let deadline = ContinuousClock.now + .seconds(Self.confirmationWait)
        func arrived() -> ConfirmationOutcome? {
            owners.read(id) { state in
                if let confirmation = state.enrollment.confirmation(of: response) { return .confirmed(confirmation) }
                return state.enrollment.answeredAnother(to: response.requestHash, than: response.hash) ? .answeredAnother : nil
            } ?? nil
        }
        while ContinuousClock.now < deadline {
            let token = hub.arm(id)
            if let outcome = arrived() {
                hub.disarm(id, token)
                return outcome
            }
            _ = await hub.wait(id, token, until: min(deadline, .now + .seconds(1)))
            if let outcome = arrived() { return outcome }
            // Not there yet: read the relay for this account too, in case its wake-up was lost on the way.
            await service.propagation.sync(id)
        }
        return arrived() ?? .noAnswer
    }

    var requestLifetime: TimeInterval { Double(policy.current.enrollment.requestLifetimeSeconds) }

    /// A person says a request to join is not theirs: it is no longer answered,
    /// listed or approvable here, across restarts.
    package func dismissEnrollment(_ id: AccountID, deviceID: DeviceID) async throws {
        try await owners.run(id) {
            let state = try service.existing(id)
            guard state.circle.isTrusted(state.deviceID) else { throw Refusal.invalid("this device is not trusted in the circle of \(id)") }
            guard state.mayDismiss(deviceID) else { throw Refusal(.unknown, "no enrollment request from device \(deviceID)") }
            try await service.perform(id, .dismissed(deviceID))
            logger.notice("enrollment request dismissed", metadata: ["account": "\(id)", "device": "\(deviceID)"])
        }
    }

    package func devices(_ id: AccountID) throws -> [DeviceListing] {
        let state = try service.existing(id)
        var out = state.circle.members.values.map { member in
            let id = member.keys.deviceID
            let acked: [KeyID: Date] = id == state.deviceID
                ? Dictionary(state.generations.filter { state.keys[$0.keyID] != nil }.map { ($0.keyID, $0.createdAt) }, uniquingKeysWith: { a, _ in a })
                : state.promotions.acknowledgements[id]?.generations ?? [:]
            let numbers = Set(acked.keys.compactMap { state.circle.announced(keyID: $0)?.generation })
            return DeviceListing(deviceId: id, deviceName: member.keys.name, status: member.revoked ? "revoked" : member.isRecovery ? "recovery-kit" : "trusted",
                                 lastSeen: id == state.deviceID ? now() : state.promotions.acknowledgements[id]?.lastSeen ?? Millis.date(member.joinedAt),
                                 generations: numbers.sorted(), acknowledged: Dictionary(uniqueKeysWithValues: acked.map { ($0.key.hex, $0.value) }))
        }
        for request in state.enrollment.live(at: now(), lifetime: requestLifetime) where state.circle.members[request.device.deviceID] == nil {
            out.append(DeviceListing(deviceId: request.device.deviceID, deviceName: request.device.name, status: "pending",
                                     lastSeen: request.requestedDate, generations: [], acknowledged: [:]))
        }
        if state.circle.isEmpty {
            out.append(DeviceListing(deviceId: state.deviceID, deviceName: state.record.deviceName, status: state.enrollment.isJoining ? "pending" : "trusted",
                                     lastSeen: now(), generations: state.generations.map(\.number), acknowledged: [:]))
        }
        return out.sorted { $0.deviceId < $1.deviceId }
    }
}
