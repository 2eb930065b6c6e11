package import Foundation
import Logging
package import KeyVaultProtocol
import KeyVaultAccount
import KeyVaultRelay
import KeyVaultVault

/// An account's circle made after the fact (PROTOCOL.md, "Founding later" and
/// "Recovery"): a device on its own founds its account's circle when it first
/// meets a relay, and a device restored from a version 2 recovery kit re-joins
/// the circle its lost devices left, approved by the kit's own member.
package struct Founding: Sendable {
    package let service: KeyVaultService
    let vault: Vault
    let logger: Logger
    let now: @Sendable () -> Date
    package let owners: AccountOwners
    let relay: (any Relay)?
    let relayCredentials: RelayCredentials?

    init(service: KeyVaultService) {
        self.service = service
        vault = service.vault
        logger = service.logger
        now = service.now
        owners = service.owners
        relay = service.relay
        relayCredentials = service.relayCredentials
    }

    /// Founds the circle of an account this device holds on its own: a genesis
    /// naming its generation 1, an `announce` for every other generation it holds
    /// (in the agreed order) and a `promote` of its current one, all signed here,
    /// stored first and published after. If the relay holds another circle for
    /// the account, nothing of this device's is kept there: the entries are
    /// withdrawn, the account stays on its own here, and the answer says so.
    /// Answers nil when there was nothing to found (the account has a circle).
    @discardableResult
    package func foundCircle(_ id: AccountID, identityToken: String? = nil) async throws -> AccountStatus {
        guard relay != nil else {
            throw Refusal.invalid("this daemon has no relay (--relay): an account's circle is founded on the relay its devices share")
        }
        return try await owners.run(id) {
            let state = try service.existing(id)
            // Founded already, or founded here and not on the relay yet (a crash, a refusal): then it is published now.
            if !state.circle.isEmpty && !(state.isFounding && !state.foundedAtCreation) { return service.statusOf(id)! }
            guard !state.enrollment.isJoining else { throw Refusal.invalid("this device is still joining the account \(id)") }
            guard let identity = state.identity else { throw Refusal.locked(id) }
            if relayCredentials != nil { try service.requireIdentityToken(identityToken, for: "founding the account's circle on it") }
            if state.circle.isEmpty {
                let circle = try Self.foundingCircle(of: state, identity: identity, at: now())
                try await service.perform(id, .founded(circle))
            }
            relayCredentials?.present(identityToken: identityToken, for: id)
            defer { relayCredentials?.present(identityToken: nil, for: id) }
            switch await service.publishing.publishQueued(id) {
            case .done, .waitingForUnlock:
                service.relayHealth.withLock { _ = $0.conflicts.removeValue(forKey: id) }
                logger.notice("account's circle founded on the relay from this device", metadata: ["account": "\(id)", "device": "\(state.deviceID)"])
            case .unreachable:
                // Stored: it goes out when the relay answers (a founding later is never abandoned).
                logger.notice("account's circle founded here; it reaches the relay once it answers", metadata: ["account": "\(id)"])
            case .refused(let error):
                try await withdraw(id)
                throw Refusal(.denied, "the relay service refused to found the account's circle (\(error)); "
                    + "sign in again for this device's identity nonce and pass the new identity token")
            case .blocked:
                // `publishQueued` withdrew the entries and said why.
                throw Refusal.invalid(Self.conflictNote(id))
            }
            return service.statusOf(id)!
        }
    }

    /// At an unlock: an account without a circle is founded on the embedded relay at once. A relay
    /// service needs the person's sign-in for it, so there the log says how (`POST …/circle`).
    func foundIfAlone(_ id: AccountID) async {
        guard relay != nil, let state = owners.state(id), state.circle.isEmpty, !state.enrollment.isJoining,
              service.relayHealth.withLock({ $0.conflicts[id] == nil }) else { return }
        guard relayCredentials == nil else {
            logger.notice("\(Self.unfoundedNote)", metadata: ["account": "\(id)"])
            return
        }
        do {
            try await foundCircle(id)
        } catch {
            // A conflict was said where it was found, once.
            guard service.relayHealth.withLock({ $0.conflicts[id] == nil }) else { return }
            logger.warning("the account's circle was not founded on the relay", metadata: ["account": "\(id)", "problem": "\(error)"])
        }
    }

    /// The circle a device on its own founds: its generation 1 in the genesis, then
    /// the rest of what it holds announced in the agreed order, and its current key promoted.
    static func foundingCircle(of state: AccountState, identity: DeviceIdentity, at date: Date) throws -> CircleState {
        let held = state.generations.filter { $0.state == .active && state.keys[$0.keyID] != nil }.sorted { $0.precedes($1) }
        guard let first = held.first(where: { $0.number == .first }) else {
            throw Refusal.invalid("the account \(state.record.id) holds no generation 1 here, which a circle's genesis names; "
                + "it stays on its own (a recovery kit made on a device of its circle restores it into that circle)")
        }
        let ms = { (date: Date) in Millis.of(date, rounding: .toNearestOrAwayFromZero) }
        // A later founding's genesis is signed after its key was made: at creation the two times are one
        // (`AccountState.foundedAtCreation`), and only that founding is dropped when another circle holds the account.
        let signedAt = Millis.date(max(ms(date), ms(first.createdAt) + 1))
        var circle = CircleState(account: state.record.id)
        let keys = DeviceKeys(signing: identity.signing.publicKey, box: identity.box.publicKey, name: state.record.deviceName)
        var bodies: [LogEntry.Body] = [.genesis(device: keys, generation: .first, keyID: first.keyID, keyCreatedAt: ms(first.createdAt))]
        bodies += held.filter { $0.keyID != first.keyID }.map { .announce(generation: $0.number, keyID: $0.keyID, keyCreatedAt: ms($0.createdAt)) }
        let current = state.record.currentKey
        if let number = current.generation, let keyID = current.keyID, keyID != first.keyID, held.contains(where: { $0.keyID == keyID }) {
            bodies.append(.promote(generation: number, keyID: keyID))
        }
        for body in bodies {
            try circle.apply(circle.nextEntry(body, signer: identity.signing, signerID: identity.deviceID, at: signedAt))
        }
        return circle
    }

    /// Takes back a later founding the relay did not take: the account is on its own again.
    func withdraw(_ id: AccountID) async throws {
        try await owners.run(id) {
            _ = try service.existing(id)
            try await service.perform(id, .circleAdopted(CircleState(account: id), confirmed: 0))
        }
    }

    /// Another device's circle holds the account on the relay: this device's founding is withdrawn, said and remembered.
    func withdrawForConflict(_ id: AccountID) async throws {
        try await withdraw(id)
        service.relayHealth.withLock { $0.conflicts[id] = RelayConflict(account: id.rawValue, since: now(), note: Self.conflictNote(id)) }
        logger.warning("account not founded on the relay: \(Self.conflictNote(id))", metadata: ["account": "\(id)"])
    }

    static let unfoundedNote = "the account has no circle on the relay service yet: found it with `keyvault account found` and the "
        + "person's sign-in (an identity token for this device's identity nonce)"
    static let untrustedKitNote = "the recovery kit's member is not trusted in the account's circle on the relay (revoked, or another "
        + "circle): the kit restores keys only"

    static func conflictNote(_ id: AccountID) -> String {
        "the relay already holds a circle for the account \(id), founded by another device; nothing was changed there, and the account "
            + "stays on its own on this device with all its keys. To join that circle, keep this account's keys with `keyvault export "
            + "--recovery-kit`, delete it here and `keyvault enroll`; or use another account ID for this one"
    }

    /// A recovery kit's member still trusted in the circle the relay holds for the account,
    /// and what it alone can open there: the circle, and the keys shared to the member.
    struct Rejoin: Sendable {
        var circle: CircleState
        var member: DeviceIdentity
        var sharedKeys: [RecoveryKit.KeptKey]
    }

    /// Reads the account's circle as the kit's member (a member reads it all on a relay
    /// service) and, if the member is still trusted there, the shares sealed to it.
    /// nil: the relay holds no circle with this member trusted (the kit restores keys only).
    func rejoin(_ id: AccountID, member: DeviceIdentity) async throws -> Rejoin? {
        guard let relay else { return nil }
        service.signRelayRequests(id, as: member)
        defer { service.signRelayRequests(id, as: nil) }
        let circle = try await service.enrolling.readCircle(id, relay)
        guard circle.members[member.deviceID]?.isRecovery == true, circle.isTrusted(member.deviceID), !circle.destroyed else {
            if !circle.isEmpty {
                logger.warning("\(Self.untrustedKitNote)", metadata: ["account": "\(id)"])
            }
            return nil
        }
        var shared: [RecoveryKit.KeptKey] = []
        for row in try await relay.all(.share, account: id) where row.record.recipient == member.deviceID {
            guard let share = try? KeyShare.accept(row.record.body, with: member.box, as: member.deviceID, in: circle) else { continue }
            let header = share.header
            shared.append(RecoveryKit.KeptKey(number: header.generation, keyID: header.keyID, createdAt: header.createdAt, key: share.key))
        }
        return Rejoin(circle: circle, member: member, sharedKeys: shared)
    }
}

/// The relay holds another device's circle for an account this device holds on its own.
package struct RelayConflict: Sendable, Codable, Equatable {
    package var account: String
    package var since: Date
    package var note: String
}
