import Foundation
package import KeyVaultProtocol
package import KeyVaultCrypto
import KeyVaultAccount
import KeyVaultVault
import Logging

/// Recovery kits on this device: writing one (its own member announced in the circle first), and
/// the checks a kit's header passes before any KDF work is spent on it. Importing a kit founds an
/// account (`KeyVaultService.importRecoveryKit`).
package struct RecoveryKits: Sendable {
    let service: KeyVaultService

    /// What an import did, for a person: re-joined the circle, or restored the keys only, and why.
    static func importNote(rejoined: Bool, hasMember: Bool, hasRelay: Bool) -> String {
        if rejoined { return "restored into its circle: the kit's member approved this device, which can approve devices, rotate and revoke" }
        if !hasMember { return "keys only: this kit has no member of a circle (made before kits had one, or on a device with no circle)" }
        if !hasRelay {
            return "keys only: this daemon has no relay; to re-join the account's circle, delete the account here and import the kit again on a daemon with the account's relay"
        }
        return "keys only: the kit's member is not trusted in a circle the relay holds for the account (revoked, or the relay holds no such circle)"
    }

    /// Writes a recovery kit of every generation this device holds, under `kitPassphrase`.
    /// On a device trusted in a circle the kit also gets a member of its own, announced in
    /// the log first (a `recovery` entry): whoever holds the kit and its passphrase can
    /// re-join the account from a new device after every device is lost, and is shared
    /// every generation made after the kit.
    package func make(_ id: AccountID, kitPassphrase: SecureBytes) async throws -> (kit: [UInt8], member: DeviceID?) {
        var state = try service.existing(id)
        // Every key this device holds goes in the kit: in a circle, the shares kept while it was locked first.
        if !state.circle.isEmpty {
            await service.owners.caughtUp(id)
            state = try service.existing(id)
        }
        guard !state.isLocked else { throw Refusal.locked(id) }
        var member: DeviceIdentity?
        if service.relay != nil, state.circle.isTrustedDevice(state.deviceID), !state.circle.destroyed {
            let made = DeviceIdentity.generate()
            // Named by the day it was made, so a person tells one kit from another in `devices`.
            let name = "recovery kit of " + String(RFC3339.string(from: service.now()).prefix(10))
            try await service.publishing.appendEntry(id) { _ in
                .recovery(device: DeviceKeys(signing: made.signing.publicKey, box: made.box.publicKey, name: name))
            }
            member = made
            service.logger.notice("recovery kit's member added to the circle", metadata: ["account": "\(id)", "member": "\(made.deviceID)"])
            await service.publishing.publishOutsideLine(id)
            await service.owners.caughtUp(id)
            state = try service.existing(id)
            guard !state.isLocked else { throw Refusal.locked(id) }
        }
        let generations = state.knownGenerations.compactMap { g in
            state.heldKey(g.keyID).map { RecoveryKit.KeptKey(number: g.number, keyID: g.keyID, createdAt: g.createdAt, key: $0) }
        }
        let parameters = service.policy.current.kdf
        let kit = try await KDFRunner.run { [member] in
            try RecoveryKit.seal(account: id, generations: generations, member: member, passphrase: kitPassphrase, parameters: parameters)
        }
        return (kit, member?.deviceID)
    }

    /// A kit is opened only at a cost within Argon2id's bounds, no cheaper than
    /// this daemon's policy (a kit made at a lower cost is weaker than the vault it
    /// would restore into), and no dearer than the policy's ceiling for kits (by
    /// default its own cost): the header is not authenticated until the KDF has
    /// run, so a forged one must not choose what that costs. Answers the account
    /// the header names.
    func checkHeader(_ kit: [UInt8]) throws -> AccountID {
        let header: (account: AccountID, opsLimit: UInt64, memLimitBytes: UInt64)
        do {
            header = try RecoveryKit.header(of: kit)
        } catch is ProtocolError {
            throw Refusal.invalid("this is not a keyvaultd recovery kit")
        } catch is InvalidInput {
            throw Refusal.invalid("this is not a keyvaultd recovery kit")
        }
        func described(_ ops: UInt64, _ bytes: UInt64) -> String { "\(ops) pass(es) over \(bytes >> 10) KiB" }
        let asked = described(header.opsLimit, header.memLimitBytes)
        do {
            _ = try KDFParameters(opsLimit: header.opsLimit, memLimitBytes: header.memLimitBytes)
        } catch {
            throw Refusal.invalid("the recovery kit asks for a passphrase cost outside Argon2id's bounds (\(asked))")
        }
        let policy = service.policy.current
        let floor = policy.kdf, ceiling = policy.kitCeiling
        guard header.opsLimit >= floor.opsLimit, header.memLimitBytes >= floor.memLimitBytes else {
            throw Refusal.invalid("the recovery kit's passphrase cost (\(asked)) is below this daemon's policy "
                + "(\(described(floor.opsLimit, floor.memLimitBytes))); make the kit again under this policy")
        }
        guard header.opsLimit <= ceiling.opsLimit, header.memLimitBytes <= ceiling.memLimitBytes else {
            throw Refusal.invalid("the recovery kit asks for a passphrase cost (\(asked)) above what this daemon's policy allows for kits "
                + "(\(described(ceiling.opsLimit, ceiling.memLimitBytes)); [kdf] kit_max_passes and kit_max_memory_mib raise it)")
        }
        return header.account
    }
}
