package import Foundation
package import KeyVaultCrypto
package import KeyVaultProtocol

/// A change the vault must hold before memory does, named by the account's machine
/// (`AccountMachine.Effect.vault`) for the event that needs it. The account's owner
/// runs it (`KeyVaultService.perform`) before it publishes what the event leaves, and
/// only if the machine took the event: vault first, then memory, and an event the
/// machine refuses writes nothing. Each is one vault transaction (FORMAT.md).
package enum VaultWrite: Sendable, Equatable {
    /// A generation key and its wrapped item (and, `makingCurrent`, the current key with them).
    case addGeneration(KeyGeneration, item: StoredItem, makingCurrent: Bool)
    /// A generation stored but never announced, and its item, removed.
    case removeGeneration(KeyID)
    /// Every generation key's item removed and its generation marked destroyed.
    case destroyKeys
    /// Every item wrapped again under a new KEK, with its salt and cost.
    case rewrap(items: [StoredItem], salt: [UInt8], kdf: KDFParameters)
    /// The pairing exchange's key, wrapped under the KEK, kept with the enrollment row.
    case keepPairingKey([UInt8])
    /// Relay records kept for the next start that are done with (shares kept while locked, taken since).
    case dropRelayNotes([RelayCursor])
    /// A request to join that a person dismissed, kept so that it is never listed again.
    case dismissRequest(DeviceID)
    /// Promotion deadlines the vault no longer needs (their keys promoted).
    case clearPromotionDeadlines([KeyID])
    /// The relay holds this device's log through `through` entries, and took the `settled` shares.
    case confirmLog(through: Int, settled: [OwedDelivery])
    /// The relay was read up to `cursor`; the records `keep` are kept for the next start with it.
    case advanceRelayCursor(to: RelayCursor, keep: [RelayNote])
    /// Entries added after the log's last, with the current key the circle now names, the count the relay
    /// holds (nil: unchanged), and what an entry this device appended brings with it: the shares it
    /// owes, the promotion deadline of an announce, and the outbox rows that ride with it.
    case appendLog(entries: [LogEntry], confirmed: Int?, current: CurrentKey, owe: [OwedDelivery],
                   promotionDeadline: PromotionDeadline?, outbox: [RelayRecord])
    /// The log from `from` on replaced by `entries` (a rebase after another device's entries, a
    /// circle read afresh, a founding withdrawn), with the current key and the count the relay holds.
    case replaceLog(from: LogSeq, entries: [LogEntry], confirmed: Int, current: CurrentKey)

    /// An announced key's promotion deadline, kept with the announce.
    package struct PromotionDeadline: Sendable, Equatable {
        package var keyID: KeyID
        package var at: Date

        package init(keyID: KeyID, at: Date) {
            self.keyID = keyID
            self.at = at
        }
    }
}
