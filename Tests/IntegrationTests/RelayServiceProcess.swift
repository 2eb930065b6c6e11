import Foundation
import KeyVaultTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A real `keyvault-relay` on 127.0.0.1 (plain HTTP, an ephemeral port), with
/// its own log file; the port is read from its "listening on" line.
final class RelayServiceProcess: @unchecked Sendable {
    let store: String
    let issuer: TestIdentityIssuer
    let logPath: String
    private(set) var process: ChildProcess?
    private(set) var port = 0
    var url: String { "http://127.0.0.1:\(port)" }

    init(store: String, issuer: TestIdentityIssuer, logPath: String) {
        self.store = store
        self.issuer = issuer
        self.logPath = logPath
    }

    /// Starts it (again on the same port, once it had one) and waits for it to listen.
    func start() async throws {
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let arguments = ["--store", store, "--listen", "127.0.0.1:\(port)", "--plain-http"] + issuer.relayArguments
        let process = try ChildProcess(DaemonProcess.binaryDirectory + "/keyvault-relay", arguments, stdoutPath: logPath, stderrPath: logPath)
        self.process = process
        for _ in 0..<400 {
            if let status = process.poll() { throw TestFailure("keyvault-relay exited with \(status): \(logText())") }
            if let line = logText().split(separator: "\n").first(where: { $0.contains("listening on") }),
               let portText = line.split(separator: ":").last, let port = Int(portText.trimmingCharacters(in: .whitespaces)) {
                self.port = port
                return
            }
            try await Task.sleep(for: .milliseconds(25))
        }
        throw TestFailure("keyvault-relay did not start listening: \(logText())")
    }

    /// Kills and reaps it, without waiting on anything else (for cleanup).
    func remove() {
        guard let process, process.isRunning else { return }
        kill(process.pid, SIGKILL)
        var raw: Int32 = 0
        waitpid(process.pid, &raw, 0)
    }

    func kill9() async {
        process?.signal(SIGKILL)
        _ = await process?.wait()
    }

    @discardableResult
    func stop() async -> Int32 {
        guard let process else { return 0 }
        process.signal(SIGTERM)
        return await process.wait()
    }

    func logText() -> String {
        (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
    }
}
