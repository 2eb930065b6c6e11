import Foundation
#if canImport(Glibc)
import Glibc
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultAccount
import KeyVaultVault
import KeyVaultRelay
import KeyVaultRelayClient
import KeyVaultRelayStore
#endif

/// A child process started with posix_spawn and reaped with a non-blocking
/// waitpid. Tests never block a thread of the cooperative pool waiting for a
/// child (Foundation's `Process.waitUntilExit` can starve a 2-core pool).
final class ChildProcess: @unchecked Sendable {
    let pid: pid_t
    private var status: Int32?

    /// Standard input from `stdinPath` (or /dev/null); output appended to the files.
    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34), which Swift's Glibc module does not declare.
    private static let addCloseFrom: @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32 = {
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else {
            fatalError("glibc 2.34 or later is needed: posix_spawn_file_actions_addclosefrom_np")
        }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()

    init(_ executable: String, _ arguments: [String], environment: [String: String] = [:],
         stdinPath: String? = nil, stdoutPath: String, stderrPath: String) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, stdinPath ?? "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdoutPath, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        // Nothing else of this process's: a child holding the write end of another child's stdin pipe (a
        // test's WriteLockHolder) would keep that child from ever reading its end, and the test waiting on it.
        guard Self.addCloseFrom(&actions, 3) == 0 else { throw TestFailure("posix_spawn_file_actions_addclosefrom_np failed") }
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        // A clean slate of signals: the test runner's threads may block some, and a
        // child inherits the spawning thread's mask (curl would then ignore SIGTERM).
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGPIPE] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard rc == 0 else { throw TestFailure("posix_spawn \(executable) failed: \(rc)") }
        self.pid = pid
    }

    /// nil while running; the exit status (or 128 + signal) once it ended.
    func poll() -> Int32? {
        if let status { return status }
        var raw: Int32 = 0
        guard waitpid(pid, &raw, WNOHANG) == pid else { return nil }
        let exited = raw & 0x7f == 0
        status = exited ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
        return status
    }

    var isRunning: Bool { poll() == nil }

    func wait() async -> Int32 {
        while true {
            if let status = poll() { return status }
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    func signal(_ number: Int32) {
        if isRunning { kill(pid, number) }
    }

    /// SIGKILL and reap at once, blocking (for cleanup in `defer`, where nothing can await).
    func killAndReap() {
        guard isRunning else { return }
        kill(pid, SIGKILL)
        var raw: Int32 = 0
        waitpid(pid, &raw, 0)
        status = 128 + SIGKILL
    }
}

/// Runs a program to the end; returns its status and output. With `timeout`, one still running
/// then is killed (status 128 + SIGKILL): for a program that should exit at once, and might serve.
func run(_ executable: String, _ arguments: [String], stdin: String? = nil, environment: [String: String] = [:],
         timeout: Duration? = nil) async throws -> (status: Int32, out: String, err: String) {
    var template = Array("/tmp/kvrun-XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { throw TestFailure("mkdtemp failed") }
    let dir = String(cString: made)
    defer { try? FileManager.default.removeItem(atPath: dir) }
    var stdinPath: String?
    if let stdin {
        stdinPath = dir + "/in"
        try stdin.write(toFile: stdinPath!, atomically: true, encoding: .utf8)
    }
    let child = try ChildProcess(executable, arguments, environment: environment, stdinPath: stdinPath,
                                 stdoutPath: dir + "/out", stderrPath: dir + "/err")
    if let timeout {
        let end = ContinuousClock.now + timeout
        while child.isRunning, ContinuousClock.now < end { try? await Task.sleep(for: .milliseconds(5)) }
        child.killAndReap()
    }
    let status = await child.wait()
    let out = (try? String(contentsOfFile: dir + "/out", encoding: .utf8)) ?? ""
    let err = (try? String(contentsOfFile: dir + "/err", encoding: .utf8)) ?? ""
    return (status, out, err)
}
