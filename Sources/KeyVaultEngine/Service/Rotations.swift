import Foundation
import KeyVaultPolicy
import Logging
import KeyVaultCrypto
package import KeyVaultProtocol
import KeyVaultAccount
import KeyVaultRelay
import KeyVaultVault

/// Rotation in two phases (distribute, then promote) and revocation.
package struct Rotations: Sendable {
    package let service: KeyVaultService
    let vault: Vault
    let policy: PolicyStore
    let logger: Logger
    let now: @Sendable () -> Date
    let clock: any EngineClock
    package let owners: AccountOwners
    let relay: (any Relay)?
    let hub: WaitingHub

    init(service: KeyVaultService) {
        self.service = service
        vault = service.vault
        policy = service.policy
        logger = service.logger
        now = service.now
        clock = service.clock
        owners = service.owners
        relay = service.relay
        hub = service.hub
    }

    package enum Promotion: String, Sendable {
        /// Current once every trusted device has acknowledged it, or at the policy's deadline.
        case afterAcks = "after-acks"
        /// Current at once.
        case now
    }

    package struct RotationResult: Sendable, Codable {
        package var generation: Generation
        package var keyId: KeyID
        package var promoted: Bool
        package var devices: [DeviceID]
        /// The new generation is stored and served here, but has not reached
        /// the relay yet (`note` says why); it goes out once it can.
        package var queued: Bool
        package var note: String?
    }

    /// Announces a new generation, seals it to every trusted device, and
    /// promotes it now or once all have acknowledged it. Syncs first: a device
    /// does not rotate from a stale view of the log it could have read. With the
    /// relay unreachable it rotates here and queues the rest (`queued`); if
    /// another device rotated meanwhile, both keys are kept (docs/PROTOCOL.md, "Concurrent rotations").
    package func rotate(_ id: AccountID, promotion: Promotion) async throws -> RotationResult {
        // What followed an unlock goes first (it may found the account's circle on the relay).
        await owners.caughtUp(id)
        // A device on its own (no relay, or its account's circle not founded on the relay yet) rotates alone.
        let alone = owners.read(id) { $0.circle.isEmpty && !$0.enrollment.isJoining } ?? false
        guard relay != nil, !alone else { return try await owners.run(id) { try await rotateAlone(id) } }
        // What the relay holds is read first and the rotation's write is made after its job, both outside
        // the account's line (issue 34): a relay that is slow or cannot be written holds back the
        // rotation's answer, never the account's other work.
        await service.propagation.sync(id)
        let rotated = try await owners.run(id) { try await rotateInJob(id, promotion: promotion) }
        return answer(rotated, id, published: await service.publishing.publishOutsideLine(id))
    }

    /// A device with no relay is its account's only device, and keeps no log:
    /// the new generation is stored and made current in one vault transaction.
    func rotateAlone(_ id: AccountID) async throws -> RotationResult {
        let state = try service.existing(id)
        guard state.circle.isEmpty else {
            throw Refusal.invalid("the account \(id) has a circle of devices, kept through a relay: start the daemon with its --relay to rotate")
        }
        guard let kek = state.kek else { throw Refusal.locked(id) }
        guard state.generations.allSatisfy({ $0.state != .destroyed }) else { throw Refusal(.destroyed, "the account \(id) was destroyed") }
        guard let number = state.generations.map(\.number).max().map({ $0.next }) ?? .first else { throw Self.noNumberLeft(id) }
        let key = SecretKey.generate()
        let generation = newGeneration(number, of: key)
        try await service.storeKey(id, generation, key: key, kek: kek, accessibility: state.record.accessibility, makingCurrent: true)
        hub.announce(id, .rotated(number, generation.keyID))
        logger.notice("rotated", metadata: ["account": "\(id)", "generation": "\(number)", "devices": "1"])
        return RotationResult(generation: number, keyId: generation.keyID, promoted: true, devices: [], queued: false, note: nil)
    }

    /// No generation number is left after 2^31 − 1: said, never a trap.
    static func noNumberLeft(_ id: AccountID) -> Refusal {
        Refusal.invalid("the account \(id) has used every generation number (up to 2^31 − 1): it cannot rotate again")
    }

    /// A new generation made now, its time to the millisecond (as the log and the vault keep it).
    private func newGeneration(_ number: Generation, of key: SecretKey) -> KeyGeneration {
        KeyGeneration(number: number, keyID: KeyID(of: key), createdAt: Millis.whole(now()), state: .active)
    }

    /// What a rotation's job made, for its answer once its publish is over.
    struct Rotated: Sendable {
        let generation: Generation
        let keyID: KeyID
        let promoted: Bool
        let devices: [DeviceID]
    }

    private func answer(_ rotated: Rotated, _ id: AccountID, published publish: PublishOutcome) -> RotationResult {
        // The publish answers for everything queued when it ran (another call's entries too): the
        // rotation is on the relay once its own entries are confirmed and its key owes no share.
        let onRelay = owners.read(id) { state in
            !state.owedDeliveries.contains { $0.keyID == rotated.keyID } && !state.unconfirmedEntries.contains { entry in
                switch entry.body {
                case .announce(_, let keyID, _), .promote(_, let keyID): return keyID == rotated.keyID
                default: return false
                }
            }
        } ?? false
        let published = onRelay ? .done : publish
        logger.notice(published == .done ? "rotated" : "rotated here; queued for the relay",
                      metadata: ["account": "\(id)", "generation": "\(rotated.generation)", "devices": "\(rotated.devices.count + 1)"])
        return RotationResult(generation: rotated.generation, keyId: rotated.keyID, promoted: rotated.promoted, devices: rotated.devices,
                              queued: published != .done, note: published.note)
    }

    /// The rotation's own work, in the account's job: the new key stored, announced and owed to
    /// every trusted device (promoted too, for "now"), all kept in the vault; its publish is the
    /// caller's, and so is the read of the relay before it (outside the line, as `rotate` does).
    private func rotateInJob(_ id: AccountID, promotion: Promotion) async throws -> Rotated {
        let state = try service.existing(id)
        guard let kek = state.kek, state.identity != nil else { throw Refusal.locked(id) }
        guard state.circle.isTrusted(state.deviceID) else { throw Refusal(.revoked, "this device is not trusted in the circle of \(id)") }
        guard !state.circle.destroyed else { throw Refusal(.destroyed, "the account \(id) was destroyed") }
        guard let number = state.circle.latestGeneration.map({ $0.next }) ?? .first else { throw Self.noNumberLeft(id) }
        // A key stored by a rotation that died before its announce: announced now rather
        // than replaced, if it still has the next number; otherwise dropped (never served).
        let leftovers = state.generations.filter { state.circle.announced(keyID: $0.keyID) == nil && state.keys[$0.keyID] != nil }
        for stale in leftovers where stale.number != number { try await dropUnannounced(id, keyID: stale.keyID) }
        let reused = leftovers.first { $0.number == number }.flatMap { g in state.keys[g.keyID].map { (g, $0) } }
        let key = reused?.1 ?? SecretKey.generate()
        let keyID = KeyID(of: key)
        let generation = reused?.0 ?? newGeneration(number, of: key)
        if reused == nil {
            // Stored before anyone can learn of it: a crash after the announce loses nothing.
            try await service.storeKey(id, generation, key: key, kek: kek, accessibility: state.record.accessibility)
        }
        let others = state.circle.trustedDevices.keys.filter { $0 != state.deviceID }.sorted()
        let promoteNow = promotion == .now || others.isEmpty
        // A promotion "now" is a deadline that has passed already, kept in the vault with the announce
        // (one transaction): a crash before the promote entry leaves it owed, and the next start
        // (or unlock) promotes it.
        let deadline = (keyID: generation.keyID,
                        at: promoteNow ? now() : now().addingTimeInterval(Double(policy.current.rotation.promotionDeadlineSeconds)))
        try await service.publishing.appendEntry(id, owe: [OwedDelivery(keyID: generation.keyID)], promotionDeadline: deadline) { _ in
            .announce(generation: number, keyID: keyID, keyCreatedAt: Millis.of(generation.createdAt, rounding: .toNearestOrAwayFromZero))
        }
        if promoteNow {
            // Published with the announce and the shares, in one write.
            try await promoteInJob(id, keyID: generation.keyID)
        } else {
            schedulePromotionDeadline(id, keyID: generation.keyID, at: deadline.at)
        }
        hub.announce(id, .rotated(number, generation.keyID))
        return Rotated(generation: number, keyID: generation.keyID, promoted: promoteNow, devices: others)
    }

    /// Removes a generation stored here that the circle never announced (a rotation that died before its announce).
    func dropUnannounced(_ id: AccountID, keyID: KeyID) async throws {
        try await service.perform(id, .generationDropped(keyID))
        logger.warning("dropped a key that was stored but never announced", metadata: ["account": "\(id)", "keyId": "\(keyID)"])
    }

    /// Appends the promotion entry (another device may have promoted it meanwhile); its publish is
    /// the caller's, after the job. Locked: nothing is appended (the identity key is wrapped); the
    /// deadline stays in the vault and the unlock promotes.
    private func promoteInJob(_ id: AccountID, keyID: KeyID) async throws {
        guard owners.read(id, { $0.identity != nil }) == true else { return }
        let entry = try await service.publishing.appendEntry(id) { circle in
            guard !circle.isPromoted(keyID: keyID), let announced = circle.announced(keyID: keyID) else { return nil }
            return .promote(generation: announced.generation, keyID: keyID)
        }
        try await service.perform(id, .promoted(keyID))
        if let entry, case .promote(let generation, _) = entry.body {
            logger.notice("promoted", metadata: ["account": "\(id)", "generation": "\(generation)", "keyId": "\(keyID)"])
        }
    }

    /// Promotes what `Promotions` says is due (every other trusted device acknowledged it, or its deadline passed).
    /// Its publish follows the job, outside the account's line (inside a job: in it).
    func promoteDue(_ id: AccountID) async {
        let promoted = await owners.run(id) { () async -> Bool in
            guard let state = owners.state(id), state.identity != nil else { return false }  // locked: at the unlock
            return await perform(state.promotions.due(circle: state.circle, me: state.deviceID, at: now()), for: id)
        }
        if promoted { await service.publishing.publishOutsideLine(id) }
    }

    /// What `Promotions` asked for, in order, in the account's job. Answers whether a promote
    /// entry was appended: its publish is the caller's.
    @discardableResult
    func perform(_ effects: [Promotions.Effect], for id: AccountID) async -> Bool {
        var promoted = false
        for effect in effects {
            switch effect {
            case .schedule(let keyID, let at): schedulePromotionDeadline(id, keyID: keyID, at: at)
            case .promote(let keyID):
                do {
                    try await owners.run(id) { try await promoteInJob(id, keyID: keyID) }
                    promoted = true
                } catch {
                    logger.warning("promotion failed", metadata: ["account": "\(id)", "keyId": "\(keyID)", "problem": "\(error)"])
                }
            case .clearDeadline(let keyID):
                do { try await vault.clearPromotionDeadlines(account: id, keyIDs: [keyID]) } catch {
                    logger.error("could not clear a promotion deadline", metadata: ["account": "\(id)", "problem": "\(error)"])
                }
            }
        }
        return promoted
    }

    /// Promotes at the deadline whatever was not acknowledged by then (kept in the vault across restarts).
    /// The timer is outside the account; what it does at the deadline is one of the account's jobs.
    func schedulePromotionDeadline(_ id: AccountID, keyID: KeyID, at deadline: Date) {
        let wait = max(0, deadline.timeIntervalSince(now()))
        owners.owner(id).timers.set(keyID, after: .milliseconds(Int(wait * 1000)), on: clock) {
            let promoted = await self.owners.run(id) { () async -> Bool in
                guard let state = self.owners.state(id) else { return false }
                return await self.perform(state.promotions.deadlinePassed(keyID: keyID, circle: state.circle), for: id)
            }
            if promoted { await self.service.publishing.publishOutsideLine(id) }
        }
    }

    /// At start: the deadlines of promotions this device still owes, and what a revoke still owes
    /// (each done now if the account is unlocked, else at its unlock).
    func resumeOwedWork() {
        for id in service.propagation.accountIDs {
            owners.outsideLine(id) {
                let promoted = await self.owners.run(id) { () async -> Bool in
                    guard let state = self.owners.state(id) else { return false }
                    return await self.perform(state.promotions.resumed(circle: state.circle, me: state.deviceID, at: self.now()), for: id)
                }
                // Written after the job, outside the line: a relay that cannot be written holds back only the promote.
                if promoted { await self.service.publishing.publishOutsideLine(id) }
                await self.payOwedWork(id)
            }
        }
    }

    /// Removes a device from the circle; then, by policy, rotates and promotes at once.
    /// The rotation a revoke owes is read from the log (`CircleState.revokeDebt`), not
    /// from memory: a crash between the two is paid at the next start or unlock, and
    /// revoking the same device again pays it at once.
    package func revoke(_ id: AccountID, deviceID: DeviceID) async throws -> RotationResult? {
        guard relay != nil else { throw Refusal.invalid("this daemon has no relay") }
        // As a rotation: the relay read before the job and written after it, outside the account's line.
        await owners.caughtUp(id)
        await service.propagation.sync(id)
        let rotated: Rotated? = try await owners.run(id) {
            let state = try service.existing(id)
            guard state.identity != nil else { throw Refusal.locked(id) }
            guard state.circle.isTrusted(state.deviceID) else { throw Refusal(.revoked, "this device is not trusted in the circle of \(id)") }
            if state.circle.members[deviceID]?.revoked == true, policy.current.rotation.rotateOnRevoke,
               case .rotate(deviceID)? = state.circle.revokeDebt(signedBy: state.deviceID) {
                logger.notice("device revoked earlier, its rotation still owed: rotating now", metadata: ["account": "\(id)", "device": "\(deviceID)"])
                return try await rotateInJob(id, promotion: .now)
            }
            guard state.circle.isTrusted(deviceID) else { throw Refusal(.unknown, "device \(deviceID) is not a trusted device of \(id)") }
            guard state.circle.trustedDevices.count > 1 else {
                throw Refusal.invalid("device \(deviceID) is the account's last device; removing it would leave nobody to hold the keys")
            }
            try await service.publishing.appendEntry(id) { circle in
                guard circle.isTrusted(deviceID) else { throw Refusal(.unknown, "device \(deviceID) was removed meanwhile") }
                return .revoke(deviceID: deviceID)
            }
            logger.notice("device revoked", metadata: ["account": "\(id)", "device": "\(deviceID)"])
            hub.announce(id, .deviceRevoked(deviceID))
            guard deviceID != state.deviceID, policy.current.rotation.rotateOnRevoke else { return nil }
            // Security before availability: the removed device must not hold the current key.
            return try await rotateInJob(id, promotion: .now)
        }
        let published = await service.publishing.publishOutsideLine(id)
        return rotated.map { answer($0, id, published: published) }
    }

    /// Work a crash (or a lock) left owed, paid once the account is unlocked: the
    /// promotions due (a "now" promotion is one), then the rotation a revoke this
    /// device signed still owes. At start for every account, and at each unlock.
    /// Outside the account's line, as a rotation: the relay read before the job and written after it.
    func payOwedWork(_ id: AccountID) async {
        await promoteDue(id)
        guard policy.current.rotation.rotateOnRevoke, relay != nil,
              owners.read(id, { $0.circle.revokeDebt(signedBy: $0.deviceID) != nil }) == true else { return }
        await service.propagation.sync(id)
        let paid = await owners.run(id) { () async -> Bool in
            guard let state = owners.state(id), let debt = state.circle.revokeDebt(signedBy: state.deviceID) else { return false }
            guard state.identity != nil else {
                logger.notice("a device revoked here still holds the current key: the rotation owed runs when the account is unlocked",
                              metadata: ["account": "\(id)"])
                return false
            }
            logger.notice("a device revoked here still holds the current key: paying the rotation owed", metadata: ["account": "\(id)"])
            do {
                switch debt {
                case .promote(let keyID): try await promoteInJob(id, keyID: keyID)
                case .rotate: _ = try await rotateInJob(id, promotion: .now)
                }
                return true
            } catch {
                logger.warning("the rotation owed after a revoke failed; it is tried again at the next unlock or start",
                               metadata: ["account": "\(id)", "problem": "\(error)"])
                return false
            }
        }
        if paid { await service.publishing.publishOutsideLine(id) }
    }

    /// Runs until cancelled: rotates any account this device may rotate once its
    /// current key is older than the policy's maximum age.
    package func rotateAgedKeys() async {
        while !Task.isCancelled {
            let maxAge = policy.current.rotation.maxKeyAgeSeconds
            guard maxAge > 0 else {
                try? await clock.sleep(for: .seconds(60))
                continue
            }
            for id in owners.heldIDs {
                let due = owners.read(id) { state -> Bool in
                    guard state.identity != nil, state.circle.isTrusted(state.deviceID), !state.circle.destroyed,
                          let current = state.currentGeneration, let announced = state.circle.announced(current),
                          state.circle.latestGeneration == current else { return false }
                    return now().timeIntervalSince(announced.createdAt) > Double(maxAge)
                } ?? false
                guard due, relay != nil else { continue }
                // As a rotation: the relay read before the job and written after it, outside the account's
                // line. Re-checked in the job after the read: another device may have rotated first.
                await service.propagation.sync(id)
                let rotated = try? await owners.run(id) { () -> Bool in
                    let state = try self.service.existing(id)
                    guard let current = state.currentGeneration, state.circle.latestGeneration == current,
                          let announced = state.circle.announced(current), self.now().timeIntervalSince(announced.createdAt) > Double(maxAge) else { return false }
                    self.logger.notice("key past its maximum age: rotating", metadata: ["account": "\(id)", "generation": "\(current)"])
                    _ = try await self.rotateInJob(id, promotion: .afterAcks)
                    return true
                }
                if rotated == true { await service.publishing.publishOutsideLine(id) }
            }
            try? await clock.sleep(for: .milliseconds(max(250, min(maxAge * 250, 3_600_000))))
        }
    }
}
