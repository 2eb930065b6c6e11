import Foundation
import KeyVaultCrypto
import KeyVaultProtocol

/// The events that change an account, as named steps of its value: the owner
/// performs the I/O an event needs (the vault first), then applies the event
/// here and publishes the result. Nothing else mutates an `AccountState`'s
/// facts; `docs/ARCHITECTURE.md` ("The account machine") tabulates them.
extension AccountState {
    /// A generation key now in the vault (made here, or from a share). It goes
    /// into memory only if keys may be held: a lock that came first is not undone.
    mutating func keyStored(_ generation: KeyGeneration, item: StoredItem, key: SecretKey) {
        if !generations.contains(where: { $0.keyID == generation.keyID }) { generations.append(generation) }
        if !items.contains(where: { $0.slot == item.slot }) { items.append(item) }
        if mayHoldKeys { keys[generation.keyID] = key }
    }

    /// A device with no relay rotated: the key it stored is current at once.
    mutating func madeCurrent(_ generation: KeyGeneration) {
        record.setCurrent(CurrentKey(generation: generation.number, keyID: generation.keyID))
    }

    /// Entries the relay now holds (through `count`), and shares it took. The
    /// first confirmation of this device's own genesis ends founding.
    mutating func relayConfirmed(through count: Int, settled: [OwedDelivery]) {
        logConfirmed = max(logConfirmed, min(count, circle.entries.count))
        owedDeliveries.subtract(settled)
    }

    /// Verified entries adopted into the log (the relay's, or a rebase of this device's own).
    mutating func circleAdopted(_ verified: CircleState, confirmed: Int) {
        setCircle(verified)
        logConfirmed = confirmed
    }

    /// The circle destroyed the account: every key is shredded, nothing is owed.
    mutating func shredded() {
        keys = [:]
        owedDeliveries = []
        promotions.shredded()
        items.removeAll { $0.attributes.kind == .generationKey }
        for i in generations.indices { generations[i].state = .destroyed }
    }

    /// This device took its first key as an approved member: it has joined.
    /// Answers whether it had been joining (the vault's enrollment row then goes).
    mutating func joinedIfApproved() -> Bool {
        guard enrollment.isJoining, enrollment.trustsItsCircle, circle.isTrusted(deviceID) else { return false }
        enrollment.joined()
        return true
    }
}
