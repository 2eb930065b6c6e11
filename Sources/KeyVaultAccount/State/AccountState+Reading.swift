import KeyVaultCrypto
import KeyVaultProtocol

// Where this device is in reading the account's relay stream, what the vault kept of it,
// and the shares kept sealed until an unlock: written here only, by name.
extension AccountState {
    /// `rows` read up to `cursor`: answers whether the vault keeps the cursor now. It does with every
    /// record kept, and at least every `cursorWriteInterval` rows otherwise: reading a record twice
    /// changes nothing, so a restart may read a few again rather than every pass paying for a write.
    mutating func read(upTo cursor: RelayCursor, rows: Int, kept: [RelayNote]) -> Bool {
        relayCursor = max(relayCursor, cursor)
        let unstored = rowsSinceStoredCursor + rows
        let store = !kept.isEmpty || unstored >= Self.cursorWriteInterval
        rowsSinceStoredCursor = store ? 0 : unstored
        return store
    }

    /// The most rows read before the vault keeps the relay's cursor without a record kept.
    package static let cursorWriteInterval = 256

    /// Reading starts again from the relay's start; kept shares take the numbers the vault renumbered them to.
    mutating func restartReading(renumbered: [RelayCursor: RelayCursor]) {
        relayCursor = .start
        rowsSinceStoredCursor = 0
        readingRestarts += 1
        keptShares = Dictionary(uniqueKeysWithValues: keptShares.compactMap { old, body in renumbered[old].map { ($0, body) } })
    }

    /// The notes the vault kept of the relay, to replay once; none are left after.
    mutating func takeNotesToReplay() -> [RelayNote] {
        defer { notesToReplay = [] }
        return notesToReplay
    }

    /// Whether a share can be opened now: this device's identity is in memory (unlocked) and it
    /// trusts its circle (a joining device, once its approval is authentic).
    package var mayOpenShares: Bool { identity != nil && enrollment.trustsItsCircle }

    /// Keeps a share sealed for the next unlock, if this device cannot open it now
    /// (`mayOpenShares`) and fewer than `limit` wait. False: open it now.
    mutating func keepSealed(_ sealed: [UInt8], at cursor: RelayCursor, limit: Int) throws(ProtocolError) -> Bool {
        guard !mayOpenShares else { return false }
        guard keptShares[cursor] != nil || keptShares.count < limit else {
            throw ProtocolError.invalid("\(limit) shares already wait for an unlock; more are not kept")
        }
        keptShares[cursor] = sealed
        return true
    }

    /// Kept shares taken in (or found unusable) at an unlock.
    mutating func sharesTaken(_ cursors: [RelayCursor]) {
        for cursor in cursors { keptShares[cursor] = nil }
    }
}
