import Foundation
import KeyVaultClient
import KeyVaultTestSupport
import Testing
import KeyVaultCrypto

/// Secrets in locked pages shared by many (the crypto layer's `LockedPool`),
/// and RLIMIT_MEMLOCK said plainly. The daemons here run as a process without
/// CAP_IPC_LOCK (`setpriv --bounding-set=-ipc_lock`, so that root running the
/// tests is held to the limit like any user) under a chosen RLIMIT_MEMLOCK
/// (`prlimit`); both exec the daemon, so the child's PID is the daemon's.
@Suite("Locked memory: many accounts, few mappings, the limit said plainly")
struct LockedMemoryTests {
    static func tool(_ name: String) throws -> String {
        for directory in ["/usr/bin", "/bin", "/usr/sbin", "/sbin"] where FileManager.default.isExecutableFile(atPath: "\(directory)/\(name)") {
            return "\(directory)/\(name)"
        }
        throw TestFailure("\(name) (util-linux) is needed to start a daemon under a memory-lock limit")
    }

    /// `prlimit --memlock=SOFT:HARD -- setpriv --bounding-set=-ipc_lock --`
    static func limited(soft: Int, hard: Int) throws -> [String] {
        [try tool("prlimit"), "--memlock=\(soft):\(hard)", "--", try tool("setpriv"), "--bounding-set=-ipc_lock", "--"]
    }

    /// This process's RLIMIT_MEMLOCK hard limit (a daemon's may not go above it without CAP_SYS_RESOURCE).
    static func hardLimit() throws -> Int {
        let limits = try String(contentsOfFile: "/proc/self/limits", encoding: .utf8)
        guard let line = limits.split(separator: "\n").first(where: { $0.hasPrefix("Max locked memory") }) else {
            throw TestFailure("no RLIMIT_MEMLOCK in /proc/self/limits")
        }
        let fields = line.dropFirst("Max locked memory".count).split(separator: " ")
        return fields.count >= 2 ? Int(fields[1]) ?? Int.max : Int.max  // "unlimited"
    }

    /// The limit the tests run daemons under: 64 MiB, or this process's hard limit if lower (8 MiB is common).
    static func testLimit() throws -> Int {
        let limit = min(try hardLimit(), 64 << 20)
        guard limit >= 8 << 20 else { throw TestFailure("these tests need an RLIMIT_MEMLOCK hard limit of at least 8 MiB, not \(limit)") }
        return limit
    }

    static func mappings(of pid: pid_t) throws -> Int {
        try String(contentsOfFile: "/proc/\(pid)/maps", encoding: .utf8).split(separator: "\n").count
    }

    static func lockedMemory(_ daemon: DaemonProcess) async throws -> [String: Any] {
        let status = try await daemon.request("GET", "/v1/status")
        #expect(status.status == 200)
        return try #require(status.object["lockedMemory"] as? [String: Any])
    }

    @Test("10,000 unlocked accounts stay up in locked memory within the limit (8 MiB), in far fewer mappings than accounts")
    func tenThousandAccounts() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        let limit = try Self.testLimit()
        try await daemon.start(launcher: try Self.limited(soft: limit, hard: limit))
        let pid = try #require(daemon.process?.pid)
        let before = try Self.mappings(of: pid)

        // Accounts through the API, 16 workers at once, each on a connection made again after every creation
        // (a request with a body ends its connection); the test policy's KDF: 1 pass over 64 KiB.
        let accounts = 10_000, connections = 16
        let start = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<connections {
                group.addTask {
                    let connection = KeepAliveConnection(socket: daemon.socket)
                    for index in stride(from: worker, to: accounts, by: connections) {
                        let body = Array(#"{"user":"u\#(index)","passphrase":"passphrase \#(index)"}"#.utf8)
                        let reply = try await connection.request("POST", "/v1/accounts", body: body)
                        guard reply.status == 200 else { throw TestFailure("account u\(index): \(reply.status) \(reply.text)") }
                    }
                    await connection.close()
                }
            }
            try await group.waitForAll()
        }
        let elapsed = ContinuousClock.now - start
        print("LockedMemoryTests: \(accounts) accounts created in \(elapsed) (\(connections) connections)")

        #expect(daemon.process?.poll() == nil, "the daemon stopped: \(daemon.logText())")
        let status = try await daemon.request("GET", "/v1/status")
        let listed = try #require(status.object["accounts"] as? [[String: Any]])
        #expect(listed.count == accounts)
        #expect(listed.allSatisfy { $0["locked"] as? Bool == false }, "every account is unlocked")
        let memory = try #require(status.object["lockedMemory"] as? [String: Any])
        let secrets = try #require(memory["secrets"] as? Int)
        let inUse = try #require(memory["inUse"] as? Int)
        let reserved = try #require(memory["reserved"] as? Int)
        let locked = try #require(memory["locked"] as? Int)
        #expect(memory["limit"] as? Int == limit)
        #expect(secrets >= 3 * accounts, "an unlocked account holds its KEK, key and device keys: \(memory)")
        #expect(inUse >= secrets * 16 && inUse <= reserved, "\(memory)")
        #expect(locked == reserved, "every page of secrets is locked: \(memory)")
        #expect(memory["swappable"] as? Int == 0)
        #expect(reserved <= limit)
        print("LockedMemoryTests: \(secrets) secrets, \(inUse / accounts) bytes in use and \(reserved / accounts) reserved per account")

        // One sodium_malloc per secret took about 20 mappings per account; the pool's regions hold thousands of secrets.
        let after = try Self.mappings(of: pid)
        print("LockedMemoryTests: \(before) mappings before the accounts, \(after) after")
        #expect(after - before < accounts / 20, "\(after - before) more mappings for \(accounts) accounts")

        // Still serving, with the right key.
        for index in [0, accounts / 2, accounts - 1] {
            let key = try await daemon.request("GET", "/v1/accounts/u\(index)/keys/current")
            #expect(key.status == 200)
            #expect(key["key"].flatMap(Base64.decode)?.count == 32)
        }
        #expect(!daemon.logText().contains("swapped"), "\(daemon.logText().suffix(2000))")
        #expect(await daemon.stop() == 0)
    }

    @Test("A low RLIMIT_MEMLOCK is named with its fix at start, a refused mlock is logged and reported, and keys are still served")
    func lowLimit() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        try await daemon.start(launcher: try Self.limited(soft: 64 << 10, hard: 64 << 10))
        let log = daemon.logText()
        #expect(log.contains("locked memory limit is 64 KiB; with no account yet, the daemon needs about 1.0 MiB"), "\(log)")
        #expect(log.contains("LimitMEMLOCK=16M"), "\(log)")
        #expect(log.contains("ulimit -l"), "\(log)")

        // Enough secrets to need a second region of some size: its mlock is refused.
        for index in 0..<4 {
            let reply = try await daemon.request("POST", "/v1/accounts", json: ["user": "low\(index)", "passphrase": "passphrase"])
            #expect(reply.status == 200, "\(reply.object)")
        }
        let memory = try await Self.lockedMemory(daemon)
        #expect(memory["limit"] as? Int == 64 << 10)
        let swappable = try #require(memory["swappable"] as? Int)
        #expect(swappable > 0, "\(memory)")
        #expect((memory["locked"] as? Int ?? .max) <= 64 << 10, "\(memory)")
        let after = daemon.logText()
        #expect(after.contains("secrets are being kept in memory that may be swapped to disk"), "\(after)")
        #expect(after.contains("LimitMEMLOCK="))

        let key = try await daemon.request("GET", "/v1/accounts/low3/keys/current")
        #expect(key.status == 200)

        // Started again over the vault, the warning counts its accounts.
        #expect(await daemon.stop() == 0)
        try await daemon.start(launcher: try Self.limited(soft: 64 << 10, hard: 64 << 10))
        #expect(daemon.logText().contains("locked memory limit is 64 KiB; 4 accounts need about 1.0 MiB"), "\(daemon.logText())")
        #expect(await daemon.stop() == 0)
    }

    @Test("The soft limit is raised to the hard limit at start, and then nothing is said")
    func raisesSoftLimit() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        let limit = try Self.testLimit()
        try await daemon.start(launcher: try Self.limited(soft: 64 << 10, hard: limit))
        let memory = try await Self.lockedMemory(daemon)
        #expect(memory["limit"] as? Int == limit)
        #expect(memory["swappable"] as? Int == 0)
        #expect(!daemon.logText().contains("LimitMEMLOCK"), "\(daemon.logText())")
        #expect(await daemon.stop() == 0)
    }
}
