import KeyVaultCrypto
import KeyVaultProtocol
import Synchronization

/// The signer index's answers this instance has seen, kept so a member's requests do not
/// ask the store each time. Only what the index holds is kept (it only grows, so a kept key
/// never goes stale); a stranger's miss is never kept. A live candidacy is kept apart and
/// briefly (`candidacyKept`): a new device's requests while it pairs come seconds apart, and a
/// candidacy the store evicted meanwhile (an account's ninth evicts its oldest) or whose day
/// ended is honoured here that long at most. Candidacies, which strangers with an identity of
/// their own can file, fill and flush only their own table, never the members'. Each table is
/// bounded by count: past it, everything in it is forgotten and asked for again.
final class IndexedSigners: Sendable {
    private struct Key: Hashable {
        let account: AccountID
        let device: DeviceID
    }
    private struct Candidacy {
        let key: SigningPublicKey
        let until: Int64
        let seen: ContinuousClock.Instant
    }
    private let keys = Mutex<[Key: SigningPublicKey]>([:])
    private let candidacies = Mutex<[Key: Candidacy]>([:])
    let capacity: Int
    let candidacyCapacity: Int

    /// How long a candidacy read from the store is taken as it was read.
    static let candidacyKept = Duration.seconds(5)

    init(capacity: Int = 100_000, candidacyCapacity: Int = 10_000) {
        self.capacity = capacity
        self.candidacyCapacity = candidacyCapacity
    }

    /// What this instance knows of the signer without asking the store: indexed, or a candidacy
    /// read in the last `candidacyKept` and live at `now` (milliseconds since the epoch).
    func known(_ device: DeviceID, account: AccountID, now: Int64) -> KnownSigner? {
        let key = Key(account: account, device: device)
        if let signing = keys.withLock({ $0[key] }) { return .indexed(signing) }
        guard let candidacy = candidacies.withLock({ $0[key] }), now < candidacy.until,
              ContinuousClock.now - candidacy.seen < Self.candidacyKept else { return nil }
        return .candidate(candidacy.key, until: candidacy.until)
    }

    func forgetCandidacy(of device: DeviceID, account: AccountID) {
        candidacies.withLock { _ = $0.removeValue(forKey: Key(account: account, device: device)) }
    }

    func remember(_ signer: KnownSigner, of device: DeviceID, account: AccountID) {
        let key = Key(account: account, device: device)
        switch signer {
        case .indexed(let signing):
            keys.withLock { keys in
                if keys.count >= capacity { keys.removeAll(keepingCapacity: true) }
                keys[key] = signing
            }
        case .candidate(let signing, let until):
            candidacies.withLock { candidacies in
                if candidacies.count >= candidacyCapacity { candidacies.removeAll(keepingCapacity: true) }
                candidacies[key] = Candidacy(key: signing, until: until, seen: .now)
            }
        }
    }
}
