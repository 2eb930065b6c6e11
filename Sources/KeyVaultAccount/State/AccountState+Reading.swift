import KeyVaultCrypto
import KeyVaultProtocol

// Where this device is in reading the account's relay stream, what the vault kept of it,
// and the shares kept sealed until an unlock: written here only, by name.
extension AccountState {
    /// Rows up to `cursor` were read; `storedCursor`: the vault kept it with them, else
    /// `unstored` rows were read since it last did.
    mutating func read(upTo cursor: RelayCursor, storedCursor: Bool, unstored: Int) {
        relayCursor = max(relayCursor, cursor)
        rowsSinceStoredCursor = storedCursor ? 0 : unstored
    }

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
