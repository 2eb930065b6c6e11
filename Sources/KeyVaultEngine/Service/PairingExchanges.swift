import Synchronization
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultAccount

/// The CPace states of the pairing exchanges under way on this device, in
/// memory only (docs/PAIRING.md), each kept by its account's owner: a new
/// device's initiator, and a trusted device's responder per new device. They
/// are non-copyable, so they live here, beside the account's `Enrollment`
/// value, and each is taken out once, by the account's own job.
struct PairingExchanges: Sendable {
    package let owners: AccountOwners

    /// Keeps the new device's initiator for its request (replacing an earlier one).
    func keep(_ initiator: consuming CPace.Initiator, for account: AccountID) {
        owners.owner(account).pairings.keep(initiator)
    }

    /// The initiator, once: the exchange takes the first response and no other.
    func takeInitiator(for account: AccountID) -> CPace.Initiator? {
        owners.existing(account)?.pairings.takeInitiator()
    }

    func keep(_ responder: consuming CPace.Responder, for account: AccountID, device: DeviceID) {
        owners.owner(account).pairings.keep(responder, device: device)
    }

    /// The responder, once: its code is spent whatever the confirmation says.
    func takeResponder(for account: AccountID, device: DeviceID) -> CPace.Responder? {
        owners.existing(account)?.pairings.takeResponder(device: device)
    }

    /// Forgets every exchange of the account (it was deleted or destroyed).
    func forget(_ account: AccountID) {
        owners.existing(account)?.pairings.forgetAll()
    }
}

/// One account's exchanges under way.
final class AccountPairings: Sendable {
    private final class Held<State: ~Copyable>: @unchecked Sendable {
        // Touched only under `AccountPairings`' mutexes.
        var state: State?
        init(_ state: consuming State) { self.state = consume state }
    }

    private let initiator = Mutex<Held<CPace.Initiator>?>(nil)
    private let responders = Mutex<[DeviceID: Held<CPace.Responder>]>([:])

    func keep(_ initiator: consuming CPace.Initiator) {
        let held = Held(initiator)
        self.initiator.withLock { $0 = held }
    }

    func takeInitiator() -> CPace.Initiator? {
        initiator.withLock { held -> CPace.Initiator? in
            defer { held = nil }
            return held?.state.take()
        }
    }

    func keep(_ responder: consuming CPace.Responder, device: DeviceID) {
        let held = Held(responder)
        responders.withLock { $0[device] = held }
    }

    func takeResponder(device: DeviceID) -> CPace.Responder? {
        responders.withLock { $0.removeValue(forKey: device)?.state.take() }
    }

    /// No exchange under way.
    var isEmpty: Bool { initiator.withLock { $0 == nil } && responders.withLock { $0.isEmpty } }

    func forgetAll() {
        initiator.withLock { $0 = nil }
        responders.withLock { $0 = [:] }
    }
}
