import Foundation
import Logging
import Synchronization
@testable import KeyVault
@testable import KeyVaultEngine
@testable import KeyVaultPolicy
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultAccount
import KeyVaultVault
import KeyVaultRelay
import KeyVaultRelaySQLite

/// The engine in this process, as `keyvaultd` runs it without its socket: devices, each a
/// `KeyVaultService` over its own vault in a temporary folder, on one embedded relay file,
/// each with its propagation and aged-key rotation running (`PropagationService`, as the
/// daemon runs it), all on one `ManualClock`. What needs no process, socket or HTTP exchange
/// is tested here, and time is a step of the test (docs/ARCHITECTURE.md, "The tests").
final class EngineHarness: Sendable {
    let root: String
    let clock = ManualClock()
    var relayPath: String { root + "/relay.sqlite" }

    init() throws {
        var template = Array("/tmp/kvengine-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw HarnessFailure("mkdtemp failed") }
        root = String(cString: made)
    }

    /// The daemon's default policy with the cheap KDF the suites use, changed by `change`.
    static func policy(_ change: (inout Policy) -> Void = { _ in }) -> Policy {
        var policy = Policy.builtInDefault(selfUID: geteuid())
        policy.kdf = try! KDFParameters(opsLimit: 1, memLimitBytes: 64 * 1024)
        change(&policy)
        return policy
    }

    /// A device on the harness's relay, started: its vault is `root/name` (kept across `stop`,
    /// so the same name starts it again as a restarted daemon would, its accounts locked).
    /// `propagating` false: its propagation waits for `startPropagation` (a device whose passes are behind).
    func device(_ name: String, policy: Policy = EngineHarness.policy(), propagating: Bool = true) async throws -> HarnessDevice {
        let relay = try SQLiteRelay(path: relayPath)
        let service = try KeyVaultService(vault: try Vault(directory: root + "/" + name), policy: PolicyStore(policy: policy, directory: nil),
                                          logger: Logger(label: "harness.\(name)", factory: { _ in SwiftLogNoOpLogHandler() }),
                                          relay: relay, clock: clock)
        let device = HarnessDevice(service: service, relay: relay)
        if propagating { device.startPropagation() }
        return device
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: root)
    }
}

/// One device of the harness: its engine, and the propagation running beside it.
final class HarnessDevice: Sendable {
    let service: KeyVaultService
    let relay: any Relay
    private let propagation = Mutex<Task<Void, any Error>?>(nil)

    fileprivate init(service: KeyVaultService, relay: any Relay) {
        self.service = service
        self.relay = relay
    }

    /// Starts the propagation beside the engine, as the daemon does at its start.
    func startPropagation() {
        let service = service
        propagation.withLock { $0 = $0 ?? Task { try await PropagationService(service: service).run() } }
    }

    /// Stops as the daemon stops: propagation ends (and the timers with it), the follow-ups
    /// end, then the relay closes. The vault stays.
    func stop() async {
        if let propagation = propagation.withLock({ $0 }) {
            propagation.cancel()
            _ = await propagation.result
        }
        await service.finishFollowUps()
        await relay.shutdown()
    }

    // What the socket API's routes call, with the harness's passphrases.

    static let passphrase = "harness passphrase"

    func create(_ account: AccountID, accessibility: Accessibility = .whenUnlocked) async throws {
        _ = try await service.createAccount(account, passphrase: SecureBytes(copying: Array(Self.passphrase.utf8)), accessibility: accessibility)
    }

    func unlock(_ account: AccountID, passphrase: String = HarnessDevice.passphrase) async throws {
        try await service.unlock(account, passphrase: SecureBytes(copying: Array(passphrase.utf8)))
    }

    /// Asks to join `account` and has `approver` type the code, as a person does.
    func join(_ account: AccountID, approver: HarnessDevice) async throws {
        let ticket = try await service.enrolling.enroll(account, passphrase: SecureBytes(copying: Array(Self.passphrase.utf8)), deviceName: "joining")
        guard let code = ticket.pairingCode else { throw HarnessFailure("no pairing code for \(account)") }
        try await eventually { (try? approver.service.enrolling.enrollments(account))?.contains { $0.deviceId == ticket.deviceID } == true }
        _ = try await approver.service.enrolling.approve(account, deviceID: ticket.deviceID, pairingCode: code)
    }

    /// The key a read answers now, if it answers one.
    func key(_ account: AccountID, _ selector: KeySelector = .current) -> ReleasedKey? {
        guard case .ready(let key)? = service.availability(account, selector) else { return nil }
        return key
    }
}

struct HarnessFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Polls `condition` (real time: the engine's I/O runs on) until it holds, for at most 10 s.
func eventually(_ what: String = "condition", _ condition: () async throws -> Bool) async throws {
    let end = ContinuousClock.now + .seconds(10)
    while ContinuousClock.now < end {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(5))
    }
    throw HarnessFailure("\(what) not met within 10 s")
}
