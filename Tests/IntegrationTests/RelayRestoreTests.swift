import Foundation
import Testing
import KeyVaultProtocol
import KeyVaultRelay
import KeyVaultRelaySQLite

/// Issue 36: the relay's store restored from a backup taken before a rotation and an
/// enrollment (RELAY.md, "Backup and restore"). The store is older than what the
/// devices know it held: they notice, publish their copy of the log again, and every
/// device ends on the same circle and the same keys, with nothing lost.
@Suite("The relay's store restored from a backup", .serialized)
struct RelayRestoreTests {
    @Test("the embedded relay file restored from SQLite's online backup: the devices republish what it lost and converge")
    func sqliteFileRestored() async throws {
        let circle = try await Circle()
        defer { circle.remove() }
        let a = try await circle.device()
        let b = try await circle.device()
        #expect(try await a.request("POST", "/v1/accounts", json: ["user": "kept", "passphrase": "pa"]).status == 200)
        try await circle.enroll(b, into: "kept", approver: a, name: "b")
        #expect(try await b.request("GET", "/v1/accounts/kept/keys/current?wait=10").state == "ready")
        let path = circle.root + "/relay.sqlite", backup = circle.root + "/backup.sqlite"
        let account = try AccountID(validating: "kept")
        let store = try SQLiteRelay(path: path)

        // The backup, taken while the devices run (SQLite's online backup API, as `sqlite3 .backup` does).
        try Self.onlineBackup(from: path, to: backup)
        let entriesInBackup = try await store.all(.log, account: account).count

        // After it: a rotation, and a third device enrolled.
        #expect(try await a.request("POST", "/v1/accounts/kept/rotate", json: ["promote": "now"]).status == 200)
        let c = try await circle.device()
        try await circle.enroll(c, into: "kept", approver: a, name: "c")
        #expect(try await c.request("GET", "/v1/accounts/kept/keys/current?wait=10").state == "ready")
        let entriesBefore = try await store.all(.log, account: account).count
        #expect(entriesBefore > entriesInBackup)

        // The restore: the backup takes the file's place (its -wal and -shm go with the old file).
        try FileManager.default.copyItem(atPath: backup, toPath: path + ".restoring")
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        #expect(rename(path + ".restoring", path) == 0)

        // A device notices what the store lost, says so, and publishes its copy of the log again.
        try await eventually {
            var republished = false
            for device in [a, b, c] {
                let relay = try await device.request("GET", "/v1/status").object["relay"] as? [String: Any]
                let behind = (relay?["behind"] as? [[String: Any]])?.first { $0["account"] as? String == "kept" }
                republished = republished || behind?["republished"] as? Bool == true
            }
            return republished
        }
        let restored = try SQLiteRelay(path: path)
        try await eventually { try await restored.all(.log, account: account).count == entriesBefore }

        // Every device on the same circle and key; then a rotation after the restore reaches them all.
        try await Self.converged([a, b, c])
        #expect(try await a.request("POST", "/v1/accounts/kept/rotate", json: ["promote": "now"]).status == 200)
        let rotated = try #require(try await a.request("GET", "/v1/accounts/kept/keys/current")["key"])
        for device in [b, c] {
            try await eventually { try await device.request("GET", "/v1/accounts/kept/keys/current")["key"] == rotated }
        }
        try await Self.converged([a, b, c])
    }

    /// The relay service's PostgreSQL database restored from `pg_dump` with `pg_restore`, the
    /// service's instances stopped meanwhile and started again on their ports (RELAY.md, "Backup
    /// and restore"). The devices ride the outage out in their held reads; the service then says
    /// their cursors are past what its store holds (`cursor-ahead`), and they read again from the start.
    @Test("the relay service's PostgreSQL database restored from pg_dump: the devices are told, republish what it lost and converge")
    func postgresRestored() async throws {
        let circle = try await Circle(.service)
        defer { circle.remove() }
        let a = try await circle.device()
        let b = try await circle.device()
        #expect(try await a.request("POST", "/v1/accounts", json: ["user": "kept", "passphrase": "pa"]).status == 200)
        try await circle.enroll(b, into: "kept", approver: a, name: "b")
        #expect(try await b.request("GET", "/v1/accounts/kept/keys/current?wait=10").state == "ready")
        let database = circle.store.storeAddress, backup = circle.root + "/relay.dump"
        let account = try AccountID(validating: "kept")
        let store = try await circle.store.open()
        defer { Task { await store.shutdown() } }

        let dumped = try await run("/usr/bin/pg_dump", ["--format=custom", "--file=" + backup, database])
        #expect(dumped.status == 0, "\(dumped.err)")
        let entriesInBackup = try await store.all(.log, account: account).count

        #expect(try await a.request("POST", "/v1/accounts/kept/rotate", json: ["promote": "now"]).status == 200)
        let c = try await circle.device()
        try await circle.enroll(c, into: "kept", approver: a, name: "c")
        #expect(try await c.request("GET", "/v1/accounts/kept/keys/current?wait=10").state == "ready")
        let entriesBefore = try await store.all(.log, account: account).count
        #expect(entriesBefore > entriesInBackup)

        // The restore, with the instances stopped; then they start again where the devices look for them.
        // a and b are held still until c, which joined after the backup, has been refused there as no
        // member: c must then learn by itself that a's republishing made it one again.
        var restarted: [RelayServiceProcess] = []
        defer { for service in restarted { service.remove() } }
        a.signal(SIGSTOP)
        b.signal(SIGSTOP)
        defer { a.signal(SIGCONT); b.signal(SIGCONT) }
        for service in circle.store.services { await service.stop() }
        let restoredDump = try await run("/usr/bin/pg_restore", ["--clean", "--if-exists", "--single-transaction", "--dbname=" + database, backup])
        #expect(restoredDump.status == 0, "\(restoredDump.err)")
        #expect(try await store.all(.log, account: account).count == entriesInBackup)
        for (index, service) in circle.store.services.enumerated() {
            restarted.append(try await RelayServiceProcess.start(store: database, issuer: try #require(circle.store.issuer), root: circle.root,
                                                                 name: "restored-\(index)", arguments: ["--listen", "127.0.0.1:\(service.port)"]))
            #expect(restarted.last?.port == service.port)
        }
        try await eventually {
            restarted.contains { ((try? String(contentsOfFile: $0.logPath, encoding: .utf8)) ?? "").contains("status=403") }
        }
        a.signal(SIGCONT)
        b.signal(SIGCONT)

        try await eventually {
            var republished = false
            for device in [a, b, c] {
                let relay = try await device.request("GET", "/v1/status").object["relay"] as? [String: Any]
                let behind = (relay?["behind"] as? [[String: Any]])?.first { $0["account"] as? String == "kept" }
                republished = republished || behind?["republished"] as? Bool == true
            }
            return republished
        }
        try await eventually { try await store.all(.log, account: account).count == entriesBefore }
        try await Self.converged([a, b, c])
        #expect(try await a.request("POST", "/v1/accounts/kept/rotate", json: ["promote": "now"]).status == 200)
        let rotated = try #require(try await a.request("GET", "/v1/accounts/kept/keys/current")["key"])
        for device in [b, c] {
            try await eventually { try await device.request("GET", "/v1/accounts/kept/keys/current")["key"] == rotated }
        }
        try await Self.converged([a, b, c])
    }

    /// The same devices and the same current key on each.
    static func converged(_ devices: [DaemonProcess]) async throws {
        var seen: [String] = []
        for device in devices {
            let key = try await device.request("GET", "/v1/accounts/kept/keys/current?wait=10")
            let listed = try await device.request("GET", "/v1/accounts/kept/devices")
            let ids = ((listed.object["devices"] as? [[String: Any]]) ?? []).compactMap { $0["deviceId"] as? String }.sorted()
            seen.append("\(key["key"] ?? "none") \(key["generation"] ?? "?") \(ids)")
        }
        #expect(Set(seen).count == 1, "the devices disagree: \(seen)")
    }

    /// SQLite's online backup of a file in use (Python's `sqlite3.Connection.backup`).
    static func onlineBackup(from source: String, to target: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", """
            import sqlite3, sys
            source = sqlite3.connect(sys.argv[1]); target = sqlite3.connect(sys.argv[2])
            source.backup(target); target.close(); source.close()
            """, source, target]
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw TestFailure("the backup failed") }
    }
}
