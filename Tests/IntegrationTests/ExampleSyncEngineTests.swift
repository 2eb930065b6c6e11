import Foundation
import Testing

/// The example under examples/SyncEngine, as an app's developer would run it:
/// on a new device, against real daemons sharing a relay.
@Suite("The example sync engine")
struct ExampleSyncEngineTests {
    static let binary = DaemonProcess.binaryDirectory + "/example-sync-engine"

    @Test("it waits out pending across an enrollment, survives a lock and a rotation, and opens every record it wrote")
    func ridesOutPendingLockAndRotation() async throws {
        let circle = try await Circle()
        defer { circle.remove() }
        let a = try await circle.device()
        let b = try await circle.device()
        #expect(try await a.request("POST", "/v1/accounts", json: ["user": "notes", "passphrase": "pa"]).status == 200)
        let ticket = try await b.request("POST", "/v1/accounts/notes/enroll", json: ["passphrase": "pb", "deviceName": "b"])
        #expect(ticket.state == "pending")
        let deviceID = try #require(ticket["deviceId"]), code = try #require(ticket["pairingCode"])

        let store = b.root + "/records.jsonl", stop = b.root + "/stop", out = b.root + "/engine.out", err = b.root + "/engine.err"
        let engine = try ChildProcess(Self.binary, ["--account", "notes", "--store", store, "--stop-file", stop,
                                                    "--socket", b.socket, "--interval-ms", "50"],
                                      stdoutPath: out, stderrPath: err)
        defer { engine.killAndReap() }
        func said() -> String { (try? String(contentsOfFile: err, encoding: .utf8)) ?? "" }
        func records() -> Int { ((try? String(contentsOfFile: store, encoding: .utf8)) ?? "").split(separator: "\n").count }

        // Pending: nothing can be written until B is approved.
        try await eventually { said().contains("key: pending (awaiting-approval)") }
        try await Task.sleep(for: .milliseconds(300))
        #expect(records() == 0, "records written without a key: \(said())")

        try await eventually { try await AccountStreamTests.enrollments(a, "notes").contains(deviceID) }
        #expect(try await a.request("POST", "/v1/accounts/notes/enrollments/\(deviceID)/approve", json: ["pairingCode": code]).status == 200)
        try await eventually { records() >= 6 }

        // Locked: the engine stops writing, and goes on once B is unlocked.
        #expect(try await b.request("POST", "/v1/accounts/notes/lock").status == 200)
        try await eventually { said().contains("key: locked") }
        let whileLocked = records()
        try await Task.sleep(for: .milliseconds(300))
        #expect(records() == whileLocked, "records written while locked")
        #expect(try await b.request("POST", "/v1/accounts/notes/unlock", json: ["passphrase": "pb"]).status == 200)
        try await eventually { records() > whileLocked }

        // A rotation on A reaches B; the engine writes under generation 2.
        let rotated = try await a.request("POST", "/v1/accounts/notes/rotate", json: ["promote": "after-acks"])
        #expect(rotated.status == 200, "\(rotated.object)")
        try await eventually { said().contains("key: ready, generation 2") || said().contains("generation 2") }
        try await eventually { (try? String(contentsOfFile: store, encoding: .utf8))?.contains("\"generation\":2") == true }

        _ = FileManager.default.createFile(atPath: stop, contents: nil)
        #expect(await engine.wait() == 0, "\(said())")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(String(contentsOfFile: out, encoding: .utf8).utf8)) as? [String: Any])
        let written = try #require(summary["written"] as? Int)
        #expect(written >= 9)
        #expect(summary["stored"] as? Int == written)
        #expect(summary["opened"] as? Int == written, "\(summary)")
        #expect(summary["failed"] as? Int == 0)
        #expect(summary["generations"] as? [Int] == [1, 2])
    }
}
