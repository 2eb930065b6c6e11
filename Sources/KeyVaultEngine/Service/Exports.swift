package import Foundation
package import KeyVaultProtocol
import KeyVaultAccount
import Logging
import KeyVaultRelay
import KeyVaultVault

/// `GET …/export`: everything this device stores about an account, as data a
/// person can read, without key material (no keys, no wrapped blobs).
package struct Exports: Sendable {
    package let service: KeyVaultService
    let vault: Vault
    let logger: Logger
    package let owners: AccountOwners
    let relay: (any Relay)?

    init(service: KeyVaultService) {
        self.service = service
        vault = service.vault
        logger = service.logger
        owners = service.owners
        relay = service.relay
    }

    package struct AccountExport: Sendable, Encodable {
        package struct Item: Sendable, Encodable {
            package var itemClass, service, account, accessGroup, label, kind, accessibility: String
            package var generation: Int
            /// None for the device's identity items.
            package var keyId: KeyID?
            package var synchronizable: Bool
            package var creationDate, modificationDate: Date
        }

        package struct GenerationEntry: Sendable, Encodable {
            package var generation: Generation
            package var keyId: KeyID
            package var createdAt: Date
            package var state: String
            package var current: Bool
            package var heldHere: Bool
        }

        package struct Entry: Sendable, Encodable {
            package var seq: LogSeq
            package var kind: String
            package var signer: DeviceID
            package var createdAt: Date
            package var hash: String
            package var subject: String?
        }

        package var account: String
        package var deviceId: DeviceID
        package var deviceName: String
        package var createdAt: Date
        package var accessibility: String
        package var kdf: [String: UInt64]
        package var items: [Item]
        package var generations: [GenerationEntry]
        package var devices: [Enrollments.DeviceListing]
        package var circleLog: [Entry]
    }

    package func export(_ id: AccountID) throws -> AccountExport {
        let state = try service.existing(id)
        let current = state.currentKeyID
        let items = state.items.map { item in
            let a = item.attributes
            return AccountExport.Item(itemClass: a.itemClass, service: a.service, account: a.account, accessGroup: a.accessGroup, label: a.label,
                                      kind: a.kind.rawValue, accessibility: a.accessibility.rawValue, generation: a.generation, keyId: a.keyID,
                                      synchronizable: a.synchronizable, creationDate: a.creationDate, modificationDate: a.modificationDate)
        }
        let generations = state.knownGenerations.map { g in
            AccountExport.GenerationEntry(generation: g.number, keyId: g.keyID, createdAt: g.createdAt, state: g.state.rawValue,
                                     current: g.keyID == current, heldHere: state.heldKey(g.keyID) != nil || state.generations.contains { $0.keyID == g.keyID })
        }
        let log = state.circle.entries.map { entry -> AccountExport.Entry in
            let subject: String?
            switch entry.body {
            case .genesis(let device, _, _, _): subject = device.deviceID.hex
            case .approve(let device, _), .recovery(let device): subject = device.deviceID.hex
            case .revoke(let deviceID): subject = deviceID.hex
            case .announce(let generation, _, _): subject = "generation \(generation)"
            case .promote(let generation, _): subject = "generation \(generation)"
            case .destroy: subject = nil
            }
            return AccountExport.Entry(seq: entry.seq, kind: entry.body.kind, signer: entry.signer,
                                       createdAt: Millis.date(entry.createdAt), hash: entry.hash.hex, subject: subject)
        }
        return AccountExport(account: id.rawValue, deviceId: state.deviceID, deviceName: state.record.deviceName, createdAt: state.record.createdAt,
                             accessibility: state.record.accessibility.rawValue,
                             kdf: ["passes": state.record.kdf.opsLimit, "memoryBytes": state.record.kdf.memLimitBytes],
                             items: items, generations: generations, devices: try service.enrolling.devices(id), circleLog: log)
    }
}


/// `DELETE …/accounts/{user}`: off this device, or everywhere.
extension Exports {
    /// Removes the account from this device. With `everywhere`, first appends a
    /// signed destroy entry: every device that verifies it shreds its keys and
    /// answers `destroyed`.
    package func delete(_ id: AccountID, everywhere: Bool) async throws {
        try await owners.run(id) {
            let state = try service.existing(id)
            if everywhere {
                guard relay != nil, !state.circle.isEmpty else { throw Refusal.invalid("the account has no circle to destroy it in; delete it here only") }
                guard state.identity != nil else { throw Refusal.locked(id) }
                await service.propagation.sync(id)
                // Only a trusted device's destroy is an entry others accept; a removed one's would not verify.
                guard let synced = owners.state(id), synced.circle.isTrusted(synced.deviceID) else {
                    throw Refusal(.revoked, "this device was removed from the circle of \(id): it cannot destroy the account everywhere; delete it here only")
                }
                try await service.publishing.appendEntry(id) { circle in circle.destroyed ? nil : .destroy }
                // Shredded here at once; the other devices shred when the entry reaches them.
                await service.publishing.publishQueued(id)
                return
            }
            try await vault.deleteAccount(id)
            service.install(id, nil)
            logger.notice("account deleted from this device", metadata: ["account": "\(id)"])
        }
    }
}
