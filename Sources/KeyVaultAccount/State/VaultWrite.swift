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
    /// A request to join that a person dismissed, kept so that it is never listed again.
    case dismissRequest(DeviceID)
    /// Promotion deadlines the vault no longer needs (their keys promoted).
    case clearPromotionDeadlines([KeyID])
    /// The relay holds this device's log through `through` entries, and took the `settled` shares.
    case confirmLog(through: Int, settled: [OwedDelivery])
    /// The relay was read up to `cursor`; the records `keep` are kept for the next start with it.
    case advanceRelayCursor(to: RelayCursor, keep: [RelayNote])
}
