package import KeyVaultIDs
package import KeyVaultAccount

extension Vault {
    /// Runs a write the account's machine named (`VaultWrite`): one transaction each, but
    /// `confirmLog`, two (the count, then the shares settled; a crash between them sends
    /// the shares again, which a device holding the key ignores).
    package func apply(_ write: VaultWrite, account: AccountID) async throws {
        switch write {
        case .addGeneration(let generation, let item, let makingCurrent):
            try await addGeneration(account: account, generation: generation, item: item, makingCurrent: makingCurrent)
        case .removeGeneration(let keyID):
            try await removeGeneration(account: account, keyID: keyID)
        case .destroyKeys:
            try await destroyKeys(account: account)
        case .rewrap(let items, let salt, let kdf):
            try await rewrap(account: account, salt: salt, kdf: kdf, items: items)
        case .keepPairingKey(let wrapped):
            try await keepPairingKey(account: account, wrapped: wrapped)
        case .dropRelayNotes(let cursors):
            try await dropRelayNotes(account: account, cursors: cursors)
        case .dismissRequest(let deviceID):
            try await dismissRequest(account: account, deviceID: deviceID)
        case .clearPromotionDeadlines(let keyIDs):
            try await clearPromotionDeadlines(account: account, keyIDs: keyIDs)
        case .confirmLog(let count, let settled):
            try await confirmLog(account: account, through: count)
            try await settle(account: account, deliveries: settled)
        case .advanceRelayCursor(let cursor, let notes):
            try await advanceRelayCursor(account: account, to: cursor, keep: notes)
        case .appendLog(let entries, let confirmed, let current, let owed, let deadline, let outbox):
            try await appendLog(account: account, entries: entries.map { ($0.seq, $0.encoded) }, confirmed: confirmed, current: current,
                                owe: owed, promotionDeadline: deadline.map { ($0.keyID, $0.at) }, enqueue: outbox)
        case .replaceLog(let from, let entries, let confirmed, let current):
            try await replaceLog(account: account, from: from, entries: entries.map { ($0.seq, $0.encoded) }, confirmed: confirmed, current: current)
        }
    }
}
