package import Foundation
import KeyVaultCrypto
package import KeyVaultProtocol
package import KeyVaultAccount

/// Seal and open: AES-256-GCM envelopes under the account's keys, in batches,
/// so a sync engine never holds a key. Keys are found exactly as a key read
/// finds them (`availability`), so locked, pending, unknown and destroyed
/// answer the same way here as there.
package struct Envelopes: Sendable {
    package let service: KeyVaultService

    init(service: KeyVaultService) {
        self.service = service
    }

    /// One item of a batch: a plaintext to seal or an envelope to open, and the caller's AAD.
    package struct BatchItem: Sendable {
        package var bytes: [UInt8]
        package var aad: [UInt8]

        package init(bytes: [UInt8], aad: [UInt8]) {
            self.bytes = bytes
            self.aad = aad
        }
    }

    /// A batch is answered, or waits for a key that is expected here but has not arrived.
    package enum BatchOutcome<Value: Sendable>: Sendable {
        case done(Value)
        case pending(KeyAvailability.PendingReason, since: Date)
    }

    package struct SealedBatch: Sendable {
        package var generation: Generation
        package var keyID: KeyID
        package var envelopes: [[UInt8]]
    }

    package struct OpenedBatch: Sendable {
        package var plaintexts: [[UInt8]]
        /// The key IDs the batch used, in order of first use (for the audit line).
        package var keyIDs: [KeyID]
    }

    /// Seals every item under one key: the current one, or the generation with `keyID`.
    package func seal(_ account: AccountID, keyID: KeyID?, items: [BatchItem]) throws -> BatchOutcome<SealedBatch> {
        let released: ReleasedKey
        switch try envelopeKey(account, keyID.map { .keyID($0) } ?? .current, item: nil) {
        case .done(let key): released = key
        case .pending(let reason, let since): return .pending(reason, since: since)
        }
        let envelopes = try items.map { try Envelope.seal($0.bytes, key: released.key, account: account, aad: $0.aad).bytes }
        return .done(SealedBatch(generation: released.generation.number, keyID: released.generation.keyID, envelopes: envelopes))
    }

    /// Opens every item, each under the generation its envelope names. All or
    /// nothing: the first item that fails decides the answer, and names itself.
    package func open(_ account: AccountID, items: [BatchItem]) throws -> BatchOutcome<OpenedBatch> {
        // Every item must be an envelope before any key is looked up.
        let envelopes = try items.enumerated().map { index, item in
            do throws(Envelope.FormatError) {
                return try Envelope(parsing: item.bytes)
            } catch {
                switch error {
                case .tooShort:
                    throw Refusal.invalid("item \(index) is not an envelope: it is shorter than \(Envelope.minimumByteCount) bytes")
                case .unknownVersion(let version):
                    throw Refusal.invalid("item \(index) is not an envelope this daemon can open (version \(version))")
                }
            }
        }
        var keys: [KeyID: ReleasedKey] = [:]
        var used: [KeyID] = []
        for (index, envelope) in envelopes.enumerated() where keys[envelope.keyID] == nil {
            switch try envelopeKey(account, .keyID(envelope.keyID), item: index) {
            case .done(let key):
                keys[envelope.keyID] = key
                used.append(key.generation.keyID)
            case .pending(let reason, let since):
                return .pending(reason, since: since)
            }
        }
        var plaintexts: [[UInt8]] = []
        plaintexts.reserveCapacity(items.count)
        for (index, envelope) in envelopes.enumerated() {
            guard let key = keys[envelope.keyID] else { preconditionFailure("every key ID was looked up above") }
            do {
                plaintexts.append(try envelope.open(key: key.key, account: account, aad: items[index].aad))
            } catch CryptoError.authenticationFailed {
                for i in plaintexts.indices { Wipe.bytes(&plaintexts[i]) }
                throw Refusal.invalid("item \(index) does not open: wrong key, account or aad, or altered")
            }
        }
        return .done(OpenedBatch(plaintexts: plaintexts, keyIDs: used))
    }

    /// The key a key read would release, or its pending reason; anything else
    /// is the read's own refusal (`item` names the batch item for unknown and destroyed).
    private func envelopeKey(_ account: AccountID, _ selector: KeySelector, item: Int?) throws -> BatchOutcome<ReleasedKey> {
        guard let availability = service.availability(account, selector) else { throw Refusal.unknownAccount(account) }
        switch availability {
        case .ready(let released):
            return .done(released)
        case .pending(let reason, let since):
            return .pending(reason, since: since)
        case .unknown, .destroyed:
            let refusal = availability.refusal(account)
            guard let item else { throw refusal }
            throw Refusal(refusal.state, "item \(item): \(refusal.message)")
        case .locked, .revoked:
            throw availability.refusal(account)
        }
    }
}
