import KeyVaultCrypto
import KeyVaultProtocol

// The account opened in memory as it is made (created here, or enrolling), and what the
// engine changes of its log and pairing outside the machines.
extension AccountState {
    /// A new account, unlocked from its start: its KEK, its identity and any keys made with it.
    mutating func opened(kek: SecretKey, identity: DeviceIdentity, keys: [KeyID: SecretKey] = [:]) {
        self.kek = kek
        _ = locking.unlocked()
        self.keys = keys
        self.identity = identity
    }

    /// The relay holds the first `count` entries of the circle log.
    mutating func confirmLog(upTo count: Int) {
        logConfirmed = min(count, circle.entries.count)
    }

    /// The pairing key of a confirmed exchange, wrapped under the KEK (nil: none, a new exchange began).
    mutating func keepPairingKey(_ wrapped: [UInt8]?) {
        wrappedPairingKey = wrapped
    }

    /// The vault's write that takes the log from the one held to `circle`'s: the entries after
    /// the last they share appended, or, where `circle` differs from an entry on, the log
    /// replaced from there; with the current key `circle` names (from the value before it).
    /// Entries are compared as values (no hashing); a log that grew is found by its last entry
    /// alone, as each entry names the hash of the one before it. What rides with an entry
    /// appended here (the shares it owes, its promotion deadline, its outbox rows) goes with an append.
    func logWrite(to circle: CircleState, confirmed: Int?, owe: [OwedDelivery] = [], promotionDeadline: VaultWrite.PromotionDeadline? = nil, outbox: [RelayRecord] = []) -> VaultWrite {
        let old = self.circle.entries, new = circle.entries
        let grew = new.count >= old.count && (old.isEmpty || old[old.count - 1] == new[old.count - 1])
        let shared = grew ? old.count : zip(old, new).prefix { $0 == $1 }.count
        let current = currentKey(after: circle)
        guard shared < old.count else {
            return .appendLog(entries: Array(new[shared...]), confirmed: confirmed, current: current, owe: owe,
                              promotionDeadline: promotionDeadline, outbox: outbox)
        }
        return .replaceLog(from: LogSeq(index: shared), entries: Array(new[shared...]), confirmed: confirmed ?? logConfirmed, current: current)
    }

    /// An entry of its own appended to the log: the verified circle it makes, and the shares it owes.
    mutating func appended(_ circle: CircleState, owing deliveries: [OwedDelivery]) {
        setCircle(circle)
        owedDeliveries.formUnion(deliveries)
    }

    /// The passphrase changed: every item wrapped again under the new KEK, with its salt and KDF.
    mutating func rewrapped(_ items: [StoredItem], salt: [UInt8], kdf: KDFParameters) {
        self.items = items
        record.salt = salt
        record.kdf = kdf
    }

    /// A key stored but never announced, dropped with its item.
    mutating func dropGeneration(keyID: KeyID) {
        generations.removeAll { $0.keyID == keyID }
        items.removeAll { $0.attributes.kind == .generationKey && $0.attributes.keyID == keyID }
        keys[keyID] = nil
    }
}
