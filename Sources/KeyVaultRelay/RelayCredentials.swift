import Synchronization
package import KeyVaultCrypto
package import KeyVaultProtocol

/// What a device signs relay-service requests with, per account: its identity
/// for that account while the daemon holds it (unlocked, or enrolling), and an
/// identity token only for the moments a person's sign-in is being presented.
/// The daemon writes here; `HTTPRelay` reads. A token is held in memory only,
/// never stored, and dropped as soon as the request that carried it is done.
package final class RelayCredentials: Sendable {
    package struct Signer: Sendable {
        package var key: SigningKey
        package var box: BoxPublicKey
        package var deviceID: DeviceID

        package init(key: SigningKey, box: BoxPublicKey, deviceID: DeviceID) {
            self.key = key
            self.box = box
            self.deviceID = deviceID
        }
    }

    private struct State {
        var signers: [AccountID: Signer] = [:]
        var tokens: [AccountID: String] = [:]
        var watchers: [Int: AsyncStream<Void>.Continuation] = [:]
        var nextWatcher = 0
    }
    private let state = Mutex(State())

    package init() {}

    /// Sets (or, with nil, forgets) the account's signer. Watchers hear of a
    /// change in which accounts can be signed for.
    package func set(_ account: AccountID, signer: Signer?) {
        let changed = state.withLock { state -> [AsyncStream<Void>.Continuation] in
            let had = state.signers[account]?.deviceID
            state.signers[account] = signer
            return had == signer?.deviceID ? [] : Array(state.watchers.values)
        }
        for watcher in changed { watcher.yield() }
    }

    /// Holds a token for the account's next candidacy (nil drops it).
    package func present(identityToken token: String?, for account: AccountID) {
        state.withLock { $0.tokens[account] = token }
    }

    package func signer(for account: AccountID) -> Signer? { state.withLock { $0.signers[account] } }

    package func identityToken(for account: AccountID) -> String? { state.withLock { $0.tokens[account] } }

    /// The accounts this device can sign for now.
    package var accounts: Set<AccountID> { state.withLock { Set($0.signers.keys) } }

    /// Yields once at once, then whenever the set of signable accounts changes.
    package func changes() -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = state.withLock { state -> Int in
            state.nextWatcher += 1
            state.watchers[state.nextWatcher] = continuation
            return state.nextWatcher
        }
        continuation.onTermination = { [weak self] _ in _ = self?.state.withLock { $0.watchers.removeValue(forKey: id) } }
        continuation.yield()
        return stream
    }
}
