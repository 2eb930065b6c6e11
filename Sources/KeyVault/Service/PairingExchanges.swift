import Synchronization
import KeyVaultCrypto
import KeyVaultProtocol

/// The CPace states of the pairing exchanges under way on this device, in
/// memory only (docs/PAIRING.md): a new device's initiator per account, and a
/// trusted device's responder per account and new device. They are
/// non-copyable, so they live here, beside the account's `Enrollment` value,
/// and each is taken out once, by the account's own job.
final class PairingExchanges: Sendable {
    private final class Held<State: ~Copyable>: @unchecked Sendable {
        // Touched only under `PairingExchanges`' mutex.
        var state: State?
        init(_ state: consuming State) { self.state = consume state }
    }

    private let initiators = Mutex<[AccountID: Held<CPace.Initiator>]>([:])
    private let responders = Mutex<[String: Held<CPace.Responder>]>([:])

    /// Keeps the new device's initiator for its request (replacing an earlier one).
    func keep(_ initiator: consuming CPace.Initiator, for account: AccountID) {
        let held = Held(initiator)
        initiators.withLock { $0[account] = held }
    }

    /// The initiator, once: the exchange takes the first response and no other.
    func takeInitiator(for account: AccountID) -> CPace.Initiator? {
        initiators.withLock { initiators -> CPace.Initiator? in
            guard let held = initiators.removeValue(forKey: account) else { return nil }
            return held.state.take()
        }
    }

    func keep(_ responder: consuming CPace.Responder, for account: AccountID, device: String) {
        let held = Held(responder)
        responders.withLock { $0[Self.key(account, device)] = held }
    }

    /// The responder, once: its code is spent whatever the confirmation says.
    func takeResponder(for account: AccountID, device: String) -> CPace.Responder? {
        responders.withLock { responders -> CPace.Responder? in
            guard let held = responders.removeValue(forKey: Self.key(account, device)) else { return nil }
            return held.state.take()
        }
    }

    /// Forgets every exchange of the account (it was deleted or destroyed).
    func forget(_ account: AccountID) {
        _ = initiators.withLock { $0.removeValue(forKey: account) }
        responders.withLock { responders in
            for key in responders.keys where key.hasPrefix(account.rawValue + "/") { responders[key] = nil }
        }
    }

    private static func key(_ account: AccountID, _ device: String) -> String { account.rawValue + "/" + device }
}
