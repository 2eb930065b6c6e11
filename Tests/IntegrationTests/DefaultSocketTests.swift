import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Without `$XDG_RUNTIME_DIR` the socket's default folder is one no other local
/// user can make first (issue 32, item 8): under the user's own home.
@Suite("The default socket, without $XDG_RUNTIME_DIR")
struct DefaultSocketTests {
    @Test("a /tmp/keyvaultd-UID folder another user made first does not stop the daemon; it serves under ~/.local/state, where the CLI finds it",
          .enabled(if: geteuid() == 0, "making a folder as another uid needs root"))
    func defaultSocketInHome() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        let home = daemon.root + "/home"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        // Another user's squat where the default used to be.
        let squat = "/tmp/keyvaultd-\(geteuid())"
        let madeSquat = mkdir(squat, 0o755) == 0
        if madeSquat { _ = chown(squat, 65534, 65534) }
        defer { if madeSquat { rmdir(squat) } }
        let environment = ["XDG_RUNTIME_DIR": "", "XDG_STATE_HOME": "", "HOME": home, "KEYVAULT_SOCKET": ""]
        let process = try ChildProcess(DaemonProcess.binaryDirectory + "/keyvaultd",
                                       ["--data-dir", daemon.dataDirectory, "--policy", daemon.policyDirectory],
                                       environment: environment, stdoutPath: daemon.logPath, stderrPath: daemon.logPath)
        defer { process.killAndReap() }
        let socket = home + "/.local/state/keyvaultd/keyvaultd.sock"
        try await eventually { FileManager.default.fileExists(atPath: socket) || process.poll() != nil }
        #expect(process.poll() == nil, "the daemon stopped: \(daemon.logText())")
        var info = stat()
        #expect(stat(home + "/.local/state/keyvaultd", &info) == 0 && info.st_mode & 0o777 == 0o700)
        let status = try await run(DaemonProcess.binaryDirectory + "/keyvault", ["health"], environment: environment)
        #expect(status.status == 0, "\(status.err)")
    }

    /// The data folder's default came from the passwd entry's home and the socket's from `$HOME`:
    /// a daemon started with another `$HOME` split its two between them.
    @Test("without --data-dir and the XDG variables, the data folder and the socket are both under $HOME")
    func bothUnderHome() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        let home = daemon.root + "/home"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        let environment = ["XDG_RUNTIME_DIR": "", "XDG_STATE_HOME": "", "XDG_DATA_HOME": "", "HOME": home, "KEYVAULT_SOCKET": ""]
        let process = try ChildProcess(DaemonProcess.binaryDirectory + "/keyvaultd", ["--policy", daemon.policyDirectory],
                                       environment: environment, stdoutPath: daemon.logPath, stderrPath: daemon.logPath)
        defer { process.killAndReap() }
        try await eventually { FileManager.default.fileExists(atPath: home + "/.local/state/keyvaultd/keyvaultd.sock") || process.poll() != nil }
        #expect(process.poll() == nil, "the daemon stopped: \(daemon.logText())")
        var info = stat()
        #expect(stat(home + "/.local/share/keyvaultd", &info) == 0 && info.st_mode & 0o777 == 0o700, "\(daemon.logText())")
        let status = try await run(DaemonProcess.binaryDirectory + "/keyvault", ["health"], environment: environment)
        #expect(status.status == 0, "\(status.err)")
    }
}
