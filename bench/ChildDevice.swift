import Foundation
import KeyVault
import KeyVaultEngine
import KeyVaultPolicy
import Logging
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultAccount
import KeyVaultVault
import KeyVaultRelay
import KeyVaultRelayClient
import KeyVaultRelayStore

/// One bench device in its own process: this binary run as
/// `keyvault-bench --device VAULT SOCKET RELAY`. It serves until its standard
/// input closes, which the parent does to stop it (or the parent's death does).
final class ChildDevice: @unchecked Sendable {
    // Touched only by the circle that owns it, at start and at stop.
    private let process = Process()
    private let input = Pipe()

    /// `binary`: another build of this bench (an earlier version's, for a baseline); nil, this one.
    init(vault: String, socket: String, relay: String, binary: String? = nil) throws {
        process.executableURL = URL(fileURLWithPath: try binary ?? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        process.arguments = ["--device", vault, socket, relay]
        process.standardInput = input
        try process.run()
    }

    var processID: Int32 { process.processIdentifier }

    func stop() async {
        try? input.fileHandleForWriting.close()
        _ = try? await poll(200, every: .milliseconds(25)) { !process.isRunning }
        if process.isRunning { process.terminate() }
    }

    /// The child's side: runs one device until standard input closes, then exits.
    static func serve(vault: String, socket: String, relay address: String) async throws -> Never {
        _ = FileManager.default.createFile(atPath: vault + ".log", contents: nil)
        let logFile = FileHandle(forWritingAtPath: vault + ".log")!
        LoggingSystem.bootstrap { label in FileLogHandler(label: label, file: logFile) }
        let logger = Logger(label: "keyvaultd")
        let relay = try await BenchRelay.deviceRelay(address, logger: logger)
        _ = try DeviceCircle.startDevice(vault: vault, socket: socket, relay: relay.relay, credentials: relay.credentials, logger: logger)
        // A thread of its own blocks on standard input (empty data at end of file), not a task.
        Thread.detachNewThread {
            while !FileHandle.standardInput.availableData.isEmpty {}
            exit(0)
        }
        while true { try await Task.sleep(for: .seconds(3600)) }
    }
}
