import Foundation
import Logging

/// Rotation in two phases (distribute, then promote) and revocation.
extension KeyVaultService {
    public enum Promotion: String, Sendable {
        /// Current once every trusted device has acknowledged it, or at the policy's deadline.
        case afterAcks = "after-acks"
        /// Current at once.
        case now
    }

    public struct RotationResult: Sendable, Codable {
        public var generation: Int
        public var keyId: String
        public var promoted: Bool
        public var devices: [String]
    }

    /// Announces a new generation, seals it to every trusted device, and
    /// promotes it now or once all have acknowledged it. Syncs first: a device
    /// behind the relay's log does not rotate.
    public func rotate(_ id: AccountID, promotion: Promotion) async throws -> RotationResult {
        guard let relay else { throw Refusal.invalid("this daemon has no relay: rotation is announced through the circle log") }
        return try await gates.serialize(id) { try await rotateLocked(id, promotion: promotion, relay: relay) }
    }

    func rotateLocked(_ id: AccountID, promotion: Promotion, relay: any Relay) async throws -> RotationResult {
        try await syncOrExplain()
        for _ in 0..<5 {
            let state = try existing(id)
            guard let identity = state.identity, let kek = state.kek else { throw Refusal.locked(id) }
            guard state.circle.isTrusted(state.deviceID) else { throw Refusal(.revoked, "this device is not trusted in the circle of \(id)") }
            let number = (state.circle.latestGeneration ?? 0) + 1
            // A key stored under this number by a rotation that died before announcing it
            // is announced now rather than replaced: nothing that was stored is lost.
            let unannounced = state.keys[number].flatMap { key in state.generations.first { $0.number == number }.map { (key, $0) } }
            let created = now()
            let key = unannounced?.0 ?? SecretKey.generate()
            let keyID = key.keyID(label: Labels.keyID)
            let generation = unannounced?.1 ?? KeyGeneration(number: number, keyID: Hex.encode(keyID),
                                                            createdAt: Date(timeIntervalSince1970: (created.timeIntervalSince1970 * 1000).rounded(.down) / 1000), state: .active)
            let announce = LogEntry.make(account: id, seq: state.circle.nextSeq, previousHash: state.circle.headHash, signer: identity.signing,
                                         signerID: state.deviceID, body: .announce(generation: UInt64(number), keyID: keyID,
                                                                                   keyCreatedAt: UInt64((generation.createdAt.timeIntervalSince1970 * 1000).rounded())), at: created)
            if unannounced == nil {
                // Stored before anyone can learn of it: a crash after the announce loses nothing.
                let item = StoredItem(attributes: KeychainItem.make(account: id, kind: .generationKey, generation: number, accessibility: state.record.accessibility, at: created),
                                      wrapped: WrappedSecret.wrap(key.bytes, under: kek, context: WrapContext(account: id, kind: .generationKey, generation: number)))
                try await vault.addGeneration(account: id, generation: generation, item: item, current: state.currentGeneration ?? 1)
                accounts.withLock { states in
                    states[id]?.generations.append(generation)
                    states[id]?.items.append(item)
                    states[id]?.keys[number] = key
                }
            }
            do {
                try await relay.publish(.log(announce))
            } catch RelayError.logSeqTaken {
                // Another device announced first; if it took this number, the key stored here
                // was never announced nor served: drop it and rotate on top of the other.
                try await syncOrExplain()
                try await dropOrphan(id, generation: number)
                continue
            }
            try await adopt([announce], account: id)
            let recipients = try existing(id).circle.trustedDevices.values.map(\.keys).filter { $0.deviceID != state.deviceID }
            try await deliver(id, generation: number, to: recipients)
            logger.notice("rotated", metadata: ["account": "\(id)", "generation": "\(number)", "devices": "\(recipients.count + 1)"])
            hub.wake(id, .rotated(number, generation.keyID))
            var promoted = false
            if promotion == .now || recipients.isEmpty {
                try await promote(id, generation: number)
                promoted = true
            } else {
                schedulePromotionDeadline(id, generation: number)
            }
            return RotationResult(generation: number, keyId: generation.keyID, promoted: promoted, devices: recipients.map(\.deviceID))
        }
        throw Refusal(.error, "the circle log kept moving; try again")
    }

    /// Removes a locally stored generation whose number the circle gave to another key.
    func dropOrphan(_ id: AccountID, generation number: Int) async throws {
        let orphan = accounts.withLock { states -> Bool in
            guard let state = states[id], let local = state.generations.first(where: { $0.number == number }),
                  let announced = state.circle.announced(number) else { return false }
            return announced.keyID != local.keyID
        }
        guard orphan else { return }
        try await vault.removeGeneration(account: id, generation: number)
        accounts.withLock { states in
            states[id]?.generations.removeAll { $0.number == number }
            states[id]?.items.removeAll { $0.attributes.kind == .generationKey && $0.attributes.generation == number }
            states[id]?.keys[number] = nil
        }
        logger.warning("dropped a generation another device announced first", metadata: ["account": "\(id)", "generation": "\(number)"])
    }

    /// Appends the promotion entry (retrying past entries other devices appended).
    func promote(_ id: AccountID, generation number: Int) async throws {
        let entry = try await appendEntry(id) { circle in
            // Another device may have promoted it meanwhile.
            guard !circle.promoted.contains(number), let announced = circle.announced(number) else { return nil }
            return .promote(generation: UInt64(number), keyID: Hex.decode(announced.keyID) ?? [])
        }
        if entry != nil { logger.notice("promoted", metadata: ["account": "\(id)", "generation": "\(number)"]) }
    }

    /// After every ack: promote a generation this device announced once every trusted device holds it.
    func promoteIfAcknowledged(_ id: AccountID) async {
        let due = accounts.withLock { states -> [Int] in
            guard let state = states[id], state.identity != nil else { return [] }
            let trusted = state.circle.trustedDevices.keys.filter { $0 != state.deviceID }
            return state.circle.generations.map(\.generation).filter { number in
                !state.circle.promoted.contains(number) && state.keys[number] != nil
                    && trusted.allSatisfy { state.acks[$0]?.generations[number] != nil }
                    && state.announcedHere.contains(number)
            }
        }
        for number in due.sorted() { try? await promote(id, generation: number) }
    }

    func schedulePromotionDeadline(_ id: AccountID, generation: Int) {
        let seconds = policy.current.rotation.promotionDeadlineSeconds
        accounts.withLock { _ = $0[id]?.announcedHere.insert(generation) }
        Task {
            try? await Task.sleep(for: .seconds(seconds))
            try? await self.gates.serialize(id) { try await self.promote(id, generation: generation) }
        }
    }

    /// Seals one generation to many devices (over all cores) and stores the shares in one relay write.
    func deliver(_ id: AccountID, generation number: Int, to devices: [DeviceKeys]) async throws {
        guard let relay, !devices.isEmpty else { return }
        let found = accounts.withLock { states -> (DeviceIdentity, SecretKey, KeyGeneration, String)? in
            guard let state = states[id], let identity = state.identity, let key = state.heldKey(number),
                  let generation = state.knownGenerations.first(where: { $0.number == number }) else { return nil }
            return (identity, key, generation, state.deviceID)
        }
        guard let (identity, key, generation, sender) = found else { return }
        let headers = devices.map { KeyShare.Header(account: id, generation: number, keyID: generation.keyID, createdAt: generation.createdAt,
                                                    sender: sender, recipient: $0.deviceID) }
        let sealed = KeyShare.sealAll(key: key, headers: headers, recipients: devices.map(\.box), signer: identity.signing)
        try await relay.publish(batch: zip(devices, sealed).map { .share(account: id, recipient: $0.deviceID, sealed: $1) })
    }

    /// Removes a device from the circle; then, by policy, rotates and promotes at once.
    public func revoke(_ id: AccountID, deviceID: String) async throws -> RotationResult? {
        guard let relay else { throw Refusal.invalid("this daemon has no relay") }
        return try await gates.serialize(id) {
            try await syncOrExplain()
            let state = try existing(id)
            guard state.identity != nil else { throw Refusal.locked(id) }
            guard state.circle.isTrusted(state.deviceID) else { throw Refusal(.revoked, "this device is not trusted in the circle of \(id)") }
            guard state.circle.isTrusted(deviceID) else { throw Refusal(.unknown, "device \(deviceID) is not a trusted device of \(id)") }
            guard state.circle.trustedDevices.count > 1 else {
                throw Refusal.invalid("device \(deviceID) is the account's last device; removing it would leave nobody to hold the keys")
            }
            _ = try await appendEntry(id) { circle in
                guard circle.isTrusted(deviceID) else { throw Refusal(.unknown, "device \(deviceID) was removed meanwhile") }
                return .revoke(deviceID: deviceID)
            }
            logger.notice("device revoked", metadata: ["account": "\(id)", "device": "\(deviceID)"])
            hub.wake(id, .deviceRevoked(deviceID))
            guard deviceID != state.deviceID, policy.current.rotation.rotateOnRevoke else { return nil }
            // Security before availability: the removed device must not hold the current key.
            return try await rotateLocked(id, promotion: .now, relay: relay)
        }
    }

    /// Runs until cancelled: rotates any account this device may rotate once its
    /// current key is older than the policy's maximum age.
    public func rotateAgedKeys() async {
        while !Task.isCancelled {
            let maxAge = policy.current.rotation.maxKeyAgeSeconds
            guard maxAge > 0 else {
                try? await Task.sleep(for: .seconds(60))
                continue
            }
            for id in accounts.withLock({ Array($0.keys) }) {
                let due = accounts.withLock { states -> Bool in
                    guard let state = states[id], state.identity != nil, state.circle.isTrusted(state.deviceID), !state.circle.destroyed,
                          let current = state.currentGeneration, let announced = state.circle.announced(current),
                          state.circle.latestGeneration == current else { return false }
                    return now().timeIntervalSince(announced.createdAt) > Double(maxAge)
                }
                guard due, let relay else { continue }
                // Re-checked after a sync inside the gate: another device may have rotated first.
                _ = try? await gates.serialize(id) { () -> Bool in
                    try await self.syncOrExplain()
                    let state = try self.existing(id)
                    guard let current = state.currentGeneration, state.circle.latestGeneration == current,
                          let announced = state.circle.announced(current), self.now().timeIntervalSince(announced.createdAt) > Double(maxAge) else { return false }
                    self.logger.notice("key past its maximum age: rotating", metadata: ["account": "\(id)", "generation": "\(current)"])
                    _ = try await self.rotateLocked(id, promotion: .afterAcks, relay: relay)
                    return true
                }
            }
            try? await Task.sleep(for: .milliseconds(max(250, min(maxAge * 250, 3_600_000))))
        }
    }

    /// Syncs with the relay, or says why this device cannot know it is up to date.
    func syncOrExplain() async throws {
        guard let relay else { return }
        do {
            _ = try await relay.rows(after: relayCursor.withLock { $0 }, limit: 1)
        } catch {
            throw Refusal(.error, "the relay is unreachable, so this device cannot know it is up to date: \(error)")
        }
        await sync()
    }
}
