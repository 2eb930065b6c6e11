public import Foundation
import Logging
public import KeyVaultCrypto
public import KeyVaultProtocol
import KeyVaultStore

/// Enrollment: a new device asks to join (`enroll`), a trusted device lists
/// the requests and approves one with the pairing code both screens show.
extension KeyVaultService {
    public struct EnrollmentTicket: Sendable {
        public var deviceID: String
        /// nil until a trusted device has answered the request with a challenge.
        public var pairingCode: String?
        public var since: Date
    }

    public struct EnrollmentListing: Sendable, Codable {
        public var deviceId: String
        public var deviceName: String
        public var requestedAt: Date
    }

    public struct DeviceListing: Sendable, Codable {
        public var deviceId: String
        public var deviceName: String
        public var status: String
        public var lastSeen: Date?
        public var generations: [Int]
        /// When the device acknowledged each generation it holds, by key ID.
        public var acknowledged: [String: Date]
    }


    /// On a new device: make this device's identity for the account, publish
    /// a signed request, and answer with the pairing code. Asking again while
    /// the request waits answers the same request.
    public func enroll(_ id: AccountID, passphrase: SecureBytes, deviceName: String, identityToken: String? = nil,
                       waitForCode seconds: Double = 10) async throws -> EnrollmentTicket {
        let ticket = try await publishEnrollment(id, passphrase: passphrase, deviceName: deviceName, identityToken: identityToken)
        guard ticket.pairingCode == nil else { return ticket }
        // A trusted device that is online answers within moments; the code exists only then.
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while ContinuousClock.now < deadline {
            let token = hub.arm(id)
            if let code = accounts.withLock({ $0[id]?.enrollment.pairingCode }) {
                hub.disarm(id, token)
                // The reveal is on the relay before the person sees the code, so approval can follow at once.
                await advanceEnrollments(id)
                return EnrollmentTicket(deviceID: ticket.deviceID, pairingCode: code, since: ticket.since)
            }
            let left = deadline - ContinuousClock.now
            await hub.wait(id, token, seconds: Double(left.components.seconds) + Double(left.components.attoseconds) / 1e18)
        }
        return EnrollmentTicket(deviceID: ticket.deviceID, pairingCode: accounts.withLock { $0[id]?.enrollment.pairingCode }, since: ticket.since)
    }

    private func publishEnrollment(_ id: AccountID, passphrase: SecureBytes, deviceName: String, identityToken: String?) async throws -> EnrollmentTicket {
        guard let relay else { throw Refusal.invalid("this daemon has no relay (--relay): a device can only join an account through one") }
        return try await owners.run(id) {
            if let state = accounts.withLock({ $0[id] }) {
                guard let request = state.enrollment.ownRequest, !state.circle.isTrusted(state.deviceID) else {
                    throw Refusal.invalid("the account \(id) is already on this device")
                }
                return EnrollmentTicket(deviceID: state.deviceID, pairingCode: state.enrollment.pairingCode, since: request.requestedDate)
            }
            try requireIdentityToken(identityToken, for: "enrolling")
            // A relay service shows the circle only to a candidate: this device's identity, with the
            // person's sign-in, becomes one when it first reads (and the token is dropped after).
            let identity = relayCredentials != nil ? takeIdentity(for: id) : DeviceIdentity.generate()
            var installed = false
            signRelayRequests(id, as: identity)
            relayCredentials?.present(identityToken: identityToken, for: id)
            defer {
                relayCredentials?.present(identityToken: nil, for: id)
                if !installed { signRelayRequests(id, as: nil) }
            }
            // The circle as the relay shows it now; the pairing code binds the request to its head.
            var circle = CircleState(account: id)
            for row in try await relay.all(.log, account: id) {
                guard let entry = try? LogEntry.decode(row.record.body) else { continue }
                do { try circle.apply(entry) } catch { logger.warning("refused relay record", metadata: ["account": "\(id)", "problem": "\(error)"]) }
            }
            guard !circle.isEmpty else { throw Refusal(.unknown, "the relay knows no account \(id); create it on its first device") }

            let parameters = policy.current.kdf
            let salt = Random.bytes(KDFParameters.saltByteCount)
            let kek = try await KDFRunner.deriveKEK(passphrase: passphrase, salt: salt, parameters: parameters)
            let created = now()
            let keys = DeviceKeys(signing: identity.signing.publicKey, box: identity.box.publicKey, name: deviceName)
            let secret = Random.bytes(32)
            let request = EnrollmentRequest.make(account: id, device: keys, signer: identity.signing, headHash: circle.headHash, secret: secret, at: created)
            let items = [(ItemKind.deviceSigningKey, identity.signing.seed), (.deviceBoxKey, identity.box.secret)].map { kind, bytes in
                StoredItem(attributes: KeychainItem.make(account: id, kind: kind, generation: 0, accessibility: .whenUnlocked, at: created),
                           wrapped: WrappedSecret.wrap(bytes, under: kek, context: WrapContext(account: id, kind: kind, generation: 0)))
            }
            var record = AccountRecord(
                id: id, createdAt: created, kdf: parameters, salt: salt, accessibility: .whenUnlocked, deviceID: identity.deviceID,
                signingPublicKey: identity.signing.publicKey, boxPublicKey: identity.box.publicKey, currentGeneration: 0,
                failedUnlocks: 0, backoffUntil: Date(timeIntervalSince1970: 0))
            record.deviceName = deviceName
            let snapshot = AccountSnapshot(account: record, generations: [], items: items,
                                           circleLog: circle.entries.map(\.encoded), enrollment: request.encoded, pairingSecret: secret,
                                           logConfirmed: circle.entries.count)
            // The request goes out from the outbox, stored with the account: a crash at any point
            // leaves no device or one whose request is sent at its next start.
            try await vault.insert(snapshot, enqueue: [.request(request)])
            var state = AccountState(snapshot: snapshot)
            state.kek = kek
            _ = state.locking.unlocked()
            state.identity = identity
            install(id, state)
            installed = true
            await publishQueued(id)
            logger.info("enrollment requested", metadata: ["account": "\(id)", "device": "\(identity.deviceID)"])
            return EnrollmentTicket(deviceID: identity.deviceID, pairingCode: nil, since: request.requestedDate)
        }
    }

    /// Requests that this device may approve: live (not dismissed, not expired) and not cancelled by wrong codes.
    public func enrollments(_ id: AccountID) throws -> [EnrollmentListing] {
        let state = try existing(id)
        guard state.circle.isTrusted(state.deviceID) else { throw Refusal.invalid("this device is not (yet) trusted in the circle of \(id)") }
        return state.enrollment.listed(at: now(), lifetime: requestLifetime)
            .map { EnrollmentListing(deviceId: $0.device.deviceID, deviceName: $0.device.name, requestedAt: $0.requestedDate) }
    }

    /// Approves a request whose pairing code the person typed; then delivers
    /// every live generation to the new device.
    public func approve(_ id: AccountID, deviceID: String, pairingCode: String) async throws -> String {
        guard relay != nil else { throw Refusal.invalid("this daemon has no relay") }
        return try await owners.run(id) {
            await sync(id)
            let state = try existing(id)
            guard state.identity != nil, !state.isLocked else { throw Refusal.locked(id) }
            guard state.circle.isTrusted(state.deviceID) else { throw Refusal.invalid("this device is not trusted in the circle of \(id)") }
            var enrollment = state.enrollment
            let request: EnrollmentRequest
            switch enrollment.check(code: pairingCode, from: deviceID, at: now(), lifetime: requestLifetime) {
            case .unknown:
                throw Refusal(.unknown, "no pending enrollment request from device \(deviceID) (it never came, expired, or was dismissed)")
            case .cancelled:
                throw Refusal(.denied, "the request from \(deviceID) was cancelled after \(Enrollment.maxWrongCodes) wrong pairing codes; enroll again")
            case .notAnswered:
                throw Refusal.invalid("the new device has not answered yet; try again in a moment")
            case .wrongCode(let count):
                try await vault.recordApprovalFailures(account: id, deviceID: deviceID, failures: count)
                update(id) { $0.enrollment = enrollment }
                logger.warning("wrong pairing code", metadata: ["account": "\(id)", "device": "\(deviceID)", "failures": "\(count)"])
                let left = Enrollment.maxWrongCodes - count
                throw Refusal(.denied, left > 0 ? "wrong pairing code; \(left) tries left" : "wrong pairing code; the request is cancelled")
            case .matched(let matched):
                request = matched
            }
            // Every generation this device holds goes to the new device with the approval, in one relay write.
            let owed = state.knownGenerations.filter { state.heldKey($0.keyID) != nil }.map { OwedDelivery(keyID: $0.keyID, recipient: deviceID) }
            try await appendEntry(id, owe: owed) { _ in .approve(device: request.device, requestHash: request.hash) }
            await publishQueued(id)
            logger.notice("device approved", metadata: ["account": "\(id)", "device": "\(deviceID)"])
            return request.device.name
        }
    }

    var requestLifetime: TimeInterval { Double(policy.current.enrollment.requestLifetimeSeconds) }

    /// A person says a request to join is not theirs: it is no longer answered,
    /// listed or approvable here, across restarts.
    public func dismissEnrollment(_ id: AccountID, deviceID: String) async throws {
        try await owners.run(id) {
            let state = try existing(id)
            guard state.circle.isTrusted(state.deviceID) else { throw Refusal.invalid("this device is not trusted in the circle of \(id)") }
            var enrollment = state.enrollment
            guard enrollment.dismiss(deviceID) else { throw Refusal(.unknown, "no enrollment request from device \(deviceID)") }
            try await vault.dismissRequest(account: id, deviceID: deviceID)
            update(id) { $0.enrollment = enrollment }
            logger.notice("enrollment request dismissed", metadata: ["account": "\(id)", "device": "\(deviceID)"])
        }
    }

    public func devices(_ id: AccountID) throws -> [DeviceListing] {
        let state = try existing(id)
        var out = state.circle.members.values.map { member in
            let id = member.keys.deviceID
            let acked: [String: Date] = id == state.deviceID
                ? Dictionary(state.generations.filter { state.keys[$0.keyID] != nil }.map { ($0.keyID, $0.createdAt) }, uniquingKeysWith: { a, _ in a })
                : state.promotions.acknowledgements[id]?.generations ?? [:]
            let numbers = Set(acked.keys.compactMap { state.circle.announced(keyID: $0)?.generation })
            return DeviceListing(deviceId: id, deviceName: member.keys.name, status: member.revoked ? "revoked" : "trusted",
                                 lastSeen: id == state.deviceID ? now() : state.promotions.acknowledgements[id]?.lastSeen ?? Date(timeIntervalSince1970: Double(member.joinedAt) / 1000),
                                 generations: numbers.sorted(), acknowledged: acked)
        }
        for request in state.enrollment.listed(at: now(), lifetime: requestLifetime) where state.circle.members[request.device.deviceID] == nil {
            out.append(DeviceListing(deviceId: request.device.deviceID, deviceName: request.device.name, status: "pending",
                                     lastSeen: request.requestedDate, generations: [], acknowledged: [:]))
        }
        if state.circle.isEmpty {
            out.append(DeviceListing(deviceId: state.deviceID, deviceName: state.record.deviceName, status: state.enrollment.ownRequest == nil ? "trusted" : "pending",
                                     lastSeen: now(), generations: state.generations.map(\.number), acknowledged: [:]))
        }
        return out.sorted { $0.deviceId < $1.deviceId }
    }
}
