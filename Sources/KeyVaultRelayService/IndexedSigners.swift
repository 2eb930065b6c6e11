import KeyVaultCrypto
import KeyVaultProtocol
import Synchronization

/// The signer index's answers this instance has seen, kept so a member's requests do not
/// ask the store each time. Only what the index holds is kept (it only grows, so a kept key
/// never goes stale); a stranger's miss and a candidate's key are never kept, so nothing a
/// stranger sends fills or flushes it. Bounded by count: past it, everything is forgotten
/// and asked for again.
final class IndexedSigners: Sendable {
    private struct Key: Hashable {
        let account: AccountID
        let device: DeviceID
    }
    private let keys = Mutex<[Key: SigningPublicKey]>([:])
    let capacity: Int

    init(capacity: Int = 100_000) {
        self.capacity = capacity
    }

    func key(of device: DeviceID, account: AccountID) -> SigningPublicKey? {
        keys.withLock { $0[Key(account: account, device: device)] }
    }

    func remember(_ signing: SigningPublicKey, of device: DeviceID, account: AccountID) {
        keys.withLock { keys in
            if keys.count >= capacity { keys.removeAll(keepingCapacity: true) }
            keys[Key(account: account, device: device)] = signing
        }
    }
}
