import Foundation
import Testing

/// Issue 34: a lock never waits on the relay. Another process holds the embedded
/// relay file's write lock while the device rotates (the rotation's publish waits
/// on it); the device's lock is answered while that rotation is still waiting, and
/// nothing the rotation finishes afterwards puts a key back in memory.
@Suite("A lock is answered at once, whatever the account's jobs wait on")
struct LockAtOnceTests {
    @Test("a lock during a rotation stuck on a held relay file answers before the rotation, and stays locked after it")
    func lockDuringStuckRotation() async throws {
        var template = Array("/tmp/kvlock-XXXXXX".utf8CString)
        let root = String(cString: try #require(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: root) }
        let path = root + "/relay.sqlite"
        let a = try DaemonProcess(relay: "sqlite:" + path)
        defer { a.remove() }
        try await a.start()
        #expect(try await a.request("POST", "/v1/accounts", json: ["user": "stuck", "passphrase": "pa", "accessibility": "whenUnlocked"]).status == 200)
        #expect(try await a.request("GET", "/v1/accounts/stuck/keys/current").status == 200)

        // Another process takes the relay file's write lock and keeps it until told.
        let holder = try WriteLockHolder(path: path)
        defer { holder.release() }
        try await holder.waitUntilHeld()

        let rotation = Task { try await a.request("POST", "/v1/accounts/stuck/rotate", json: ["promote": "now"]) }
        // The rotation is in the account's line (its publish waits on the held file) before the lock is sent.
        try await eventually { try await Self.jobsInLine(a) > 0 }
        let locked = try await a.request("POST", "/v1/accounts/stuck/lock")
        #expect(locked.status == 200, "\(locked.object)")
        // Answered while the rotation's job still waits on the relay: the lock did not wait for it.
        #expect(try await Self.jobsInLine(a) > 0, "the lock was answered only once the job waiting on the relay had ended")
        #expect(try await a.request("GET", "/v1/accounts/stuck/keys/current").status == 423)

        holder.release()
        let rotated = try await rotation.value
        #expect([200, 423].contains(rotated.status), "\(rotated.object)")
        // Whatever the rotation finished after the lock, no key is readable until an unlock.
        let after = try await a.request("GET", "/v1/accounts/stuck/keys/current")
        #expect(after.status == 423, "\(after.object)")
        #expect(try await a.request("POST", "/v1/accounts/stuck/unlock", json: ["passphrase": "pa"]).status == 200)
        #expect(try await a.request("GET", "/v1/accounts/stuck/keys/current").status == 200)
    }

    /// `keyvault_daemon_account_jobs_queued`: jobs running or waiting in every account's line.
    static func jobsInLine(_ daemon: DaemonProcess) async throws -> Int {
        let metrics = try await daemon.request("GET", "/v1/metrics").raw.text
        let line = metrics.split(separator: "\n").first { $0.hasPrefix("keyvault_daemon_account_jobs_queued ") }
        return line.flatMap { Double($0.split(separator: " ").last ?? "") }.map { Int($0) } ?? 0
    }
}

/// A python3 process holding a SQLite file's write lock (`BEGIN IMMEDIATE`) until its stdin closes.
final class WriteLockHolder: @unchecked Sendable {
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()

    init(path: String) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", """
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1], timeout=30, isolation_level=None)
            db.execute("BEGIN IMMEDIATE")
            print("held", flush=True)
            sys.stdin.read()
            db.execute("COMMIT")
            """, path]
        process.standardInput = input
        process.standardOutput = output
        try process.run()
    }

    func waitUntilHeld() async throws {
        let line = await Task.detached { [output] in output.fileHandleForReading.availableData }.value
        guard String(decoding: line, as: UTF8.self).contains("held") else { throw TestFailure("the write lock was not taken") }
    }

    func release() {
        guard process.isRunning else { return }
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}
