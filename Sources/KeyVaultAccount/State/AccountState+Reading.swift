package import KeyVaultCrypto
package import KeyVaultProtocol

// Where this device is in reading the account's relay stream, what the vault kept of it,
// and the shares kept sealed until an unlock: written here only, by name.
extension AccountState {
    /// Rows up to `cursor` were read; `storedCursor`: the vault kept it with them, else
    /// `unstored` rows were read since it last did.
    package mutating func read(upTo cursor: RelayCursor, storedCursor: Bool, unstored: Int) {
        relayCursor = max(relayCursor, cursor)
        rowsSinceStoredCursor = storedCursor ? 0 : unstored
    }

    /// Reading starts again from the relay's start; kept shares take the numbers the vault renumbered them to.
    package mutating func restartReading(renumbered: [RelayCursor: RelayCursor]) {
        relayCursor = .start
        rowsSinceStoredCursor = 0
        keptShares = Dictionary(uniqueKeysWithValues: keptShares.compactMap { old, body in renumbered[old].map { ($0, body) } })
    }

    /// The notes the vault kept of the relay, to replay once; none are left after.
    package mutating func takeNotesToReplay() -> [RelayNote] {
        defer { notesToReplay = [] }
        return notesToReplay
    }

    /// Keeps a share sealed for the next unlock, if this device cannot open it now (no identity
    /// in memory, or a circle it does not trust yet) and fewer than `limit` wait. False: open it now.
    package mutating func keepSealed(_ sealed: [UInt8], at cursor: RelayCursor, limit: Int) throws(ProtocolError) -> Bool {
        guard identity == nil || !enrollment.trustsItsCircle else { return false }
        guard keptShares[cursor] != nil || keptShares.count < limit else {
            throw ProtocolError.invalid("\(limit) shares already wait for an unlock; more are not kept")
        }
        keptShares[cursor] = sealed
        return true
    }

    /// Kept shares taken in (or found unusable) at an unlock.
    package mutating func sharesTaken(_ cursors: [RelayCursor]) {
        for cursor in cursors { keptShares[cursor] = nil }
    }
}

// The account opened in memory as it is made (created here, or enrolling), and what the
// engine changes of its log and pairing outside the machines.
extension AccountState {
    /// A new account, unlocked from its start: its KEK, its identity and any keys made with it.
    package mutating func opened(kek: SecretKey, identity: DeviceIdentity, keys: [KeyID: SecretKey] = [:]) {
        self.kek = kek
        _ = locking.unlocked()
        self.keys = keys
        self.identity = identity
    }

    /// The relay holds the first `count` entries of the circle log.
    package mutating func confirmLog(upTo count: Int) {
        logConfirmed = min(count, circle.entries.count)
    }

    /// The pairing key of a confirmed exchange, wrapped under the KEK (nil: none, a new exchange began).
    package mutating func keepPairingKey(_ wrapped: [UInt8]?) {
        wrappedPairingKey = wrapped
    }

    /// An entry of its own appended to the log: the verified circle it makes, and the shares it owes.
    package mutating func appended(_ circle: CircleState, owing deliveries: [OwedDelivery]) {
        setCircle(circle)
        owedDeliveries.formUnion(deliveries)
    }

    /// The passphrase changed: every item wrapped again under the new KEK, with its salt and KDF.
    package mutating func rewrapped(_ items: [StoredItem], salt: [UInt8], kdf: KDFParameters) {
        self.items = items
        record.salt = salt
        record.kdf = kdf
    }

    /// A key stored but never announced, dropped with its item.
    package mutating func dropGeneration(keyID: KeyID) {
        generations.removeAll { $0.keyID == keyID }
        items.removeAll { $0.attributes.kind == .generationKey && $0.attributes.keyID == keyID }
        keys[keyID] = nil
    }
}
