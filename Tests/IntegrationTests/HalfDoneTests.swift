import Foundation
import KeyVault
import KeyVaultEngine
import KeyVaultPolicy
import Testing
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultAccount
import KeyVaultVault
import KeyVaultRelay
import KeyVaultRelayClient
import KeyVaultRelayStore

/// Operations that touch both the vault and the relay (account creation,
/// enrollment) leave nothing half done: the vault (its outbox) is written
/// first and the relay is written from there, so a crash at any moment leaves
/// either nothing or something the next start completes, and a full disk
/// leaves nothing.
@Suite("Nothing half done: crashes and full disks", .serialized)
struct HalfDoneTests {
    @Test("SIGKILL at random moments of account creation with a relay, 100 times")
    func killDuringCreation() async throws {
        let circle = try await Circle()
        defer { circle.remove() }
        let a = try await circle.device()
        let relay = try await circle.store.open()
        // How long a creation takes here, so the kills are spread across it.
        let started = ContinuousClock.now
        #expect(try await a.request("POST", "/v1/accounts", json: ["user": "timing", "passphrase": "p"]).status == 200)
        let span = max(ContinuousClock.now - started, .milliseconds(4))
        var completed = 0, neverExisted = 0, killedBeforeAnswer = 0

        // At least 100 rounds, and on until 10 kills landed inside a request (a loaded machine answers
        // sooner or later than the span measured above): the moments are random, the count is not.
        var round = 0
        while round < 100 || killedBeforeAnswer < 10 {
            round += 1
            try #require(round <= 400, "the kills did not land inside the requests (\(killedBeforeAnswer) of 400)")
            let user = "create-\(round)"
            let request = Task { try? await a.request("POST", "/v1/accounts", json: ["user": user, "passphrase": "p"]) }
            try await Task.sleep(for: span * Double.random(in: 0...1.3))
            await a.kill9()
            let reply = await request.value
            if reply == nil { killedBeforeAnswer += 1 }
            try await a.start()

            // Once the restart has completed what it can, the device and the relay agree.
            let id = try AccountID(validating: user)
            var onDevice = false, onRelay = false
            try await eventually {
                onDevice = try await Self.lists(a, user)
                onRelay = try await relay.rows(account: id, after: 0, limit: 10).contains { $0.record.kind == .log }
                return onDevice == onRelay
            }
            #expect(onDevice == onRelay, "round \(round): on the device \(onDevice), on the relay \(onRelay)")
            if reply?.status == 200 { #expect(onDevice, "round \(round): an answered creation was lost") }
            if onDevice {
                completed += 1
                #expect(try await a.request("POST", "/v1/accounts/\(user)/unlock", json: ["passphrase": "p"]).status == 200, "round \(round)")
                // A founding the restart completes serves its key once the device has the relay's word (awaiting-relay until then).
                #expect(try await a.request("GET", "/v1/accounts/\(user)/keys/current?wait=10").state == "ready", "round \(round)")
            } else {
                neverExisted += 1
                // Never existed: the ID is free.
                let again = try await a.request("POST", "/v1/accounts", json: ["user": user, "passphrase": "p"])
                #expect(again.status == 200, "round \(round): \(again.object)")
            }
        }
        print("creation crash test: \(round) rounds, \(completed) completed, \(neverExisted) never existed, \(killedBeforeAnswer) kills before an answer")
    }

    @Test("an account whose genesis the relay has not taken yet serves no key: pending, awaiting-relay; a waiting read gets it once the relay has")
    func foundingKeyWaitsForTheRelay() async throws {
        let circle = try await Circle(.service)
        defer { circle.remove() }
        let a = try await circle.device()
        // The relay stops answering: its connections are accepted and left hanging.
        for service in circle.store.services { service.process.signal(SIGSTOP) }
        let creation = Task { try await a.request("POST", "/v1/accounts", json: ["user": "founding", "passphrase": "p"]) }

        // Stored here, its genesis on the way: a read is told to wait, and why.
        var read = try await a.request("GET", "/v1/accounts/founding/keys/current")
        try await eventually {
            read = try await a.request("GET", "/v1/accounts/founding/keys/current")
            return read.state != "unknown"
        }
        #expect(read.state == "pending", "\(read.object)")
        #expect(read["reason"] == "awaiting-relay", "\(read.object)")
        let waiting = Task { try await a.request("GET", "/v1/accounts/founding/keys/current?wait=30") }
        try await a.waitUntilHolding()

        for service in circle.store.services { service.process.signal(SIGCONT) }
        let created = try await creation.value
        #expect(created.status == 200, "\(created.object)")
        let key = try await waiting.value
        #expect(key.state == "ready", "\(key.object)")
        let again = try await a.request("GET", "/v1/accounts/founding/keys/current")
        #expect(key["key"] != nil && key["key"] == again["key"])
    }

    @Test("SIGKILL at random moments of enrollment and approval, 100 times")
    func killDuringEnrollment() async throws {
        let circle = try await Circle()
        defer { circle.remove() }
        let a = try await circle.device()
        let b = try await circle.device()
        // How long an enrollment and its approval take here.
        #expect(try await a.request("POST", "/v1/accounts", json: ["user": "timing", "passphrase": "pa"]).status == 200)
        let started = ContinuousClock.now
        try await circle.enroll(b, into: "timing", approver: a)
        let span = max(ContinuousClock.now - started, .milliseconds(10))
        var joined = 0, startedAgain = 0

        for round in 1...100 {
            let user = "enroll-\(round)"
            #expect(try await a.request("POST", "/v1/accounts", json: ["user": user, "passphrase": "pa"]).status == 200)
            let victim = round % 2 == 0 ? a : b
            let flow = Task { try? await Self.enrollAndApprove(b, a, user) }
            try await Task.sleep(for: span * Double.random(in: 0...1.2))
            await victim.kill9()
            flow.cancel()
            _ = await flow.value
            try await victim.start()
            let passphrase = victim === a ? "pa" : "device passphrase"
            _ = try await victim.request("POST", "/v1/accounts/\(user)/unlock", json: ["passphrase": passphrase])

            // Either B joined (and gets A's key), or B can start again, get a code and join.
            let keyA = try #require(try await a.request("GET", "/v1/accounts/\(user)/keys/current")["key"], "round \(round)")
            // A approved B if A's circle trusts two devices (what A stored goes out from its vault).
            let devices = try await a.request("GET", "/v1/accounts/\(user)/devices").object["devices"] as? [[String: Any]] ?? []
            let read = try await b.request("GET", "/v1/accounts/\(user)/keys/current")
            if devices.filter({ $0["status"] as? String == "trusted" }).count == 2 {
                joined += 1
            } else {
                startedAgain += 1
                let problem = try await Self.enrollAndApproveProblem(b, a, user)
                #expect(problem == nil, "round \(round) (killed \(victim === a ? "A" : "B")): B could not start again: \(problem ?? ""); B's read: \(read.object)")
            }
            #expect(try await b.request("GET", "/v1/accounts/\(user)/keys/current?wait=10")["key"] == keyA, "round \(round): B never got the key")
        }
        print("enrollment crash test: \(joined) joined through the crash, \(startedAgain) started again")
    }

    @Test("a full disk: creation and enrollment change nothing, say so, and work once there is room")
    func fullDiskCreationAndEnrollment() async throws {
        let circle = try await Circle()
        defer { circle.remove() }
        let a = try await circle.device()
        let b = try DaemonProcess(relay: circle.relay)
        let disk = try SmallDisk(at: b.dataDirectory, megabytes: 8)
        defer { disk.unmount(); b.remove() }
        try await b.start()
        let relay = try await circle.store.open()
        #expect(try await a.request("POST", "/v1/accounts", json: ["user": "joined", "passphrase": "pa"]).status == 200)

        try disk.fill()
        // Creation: a clear error, nothing on the relay.
        let created = try await b.request("POST", "/v1/accounts", json: ["user": "founded", "passphrase": "pb"])
        #expect(created.state == "error" && (created["error"] ?? "").contains("full"), "\(created.object)")
        #expect(try await relay.rows(account: AccountID(validating: "founded"), after: 0, limit: 10).isEmpty)
        // Enrollment: a clear error, no request on the relay.
        let enrolled = try await b.request("POST", "/v1/accounts/joined/enroll", json: ["passphrase": "device passphrase", "deviceName": "b"])
        #expect(enrolled.state == "error" && (enrolled["error"] ?? "").contains("full"), "\(enrolled.object)")
        #expect(try await relay.rows(account: AccountID(validating: "joined"), after: 0, limit: 10).allSatisfy { $0.record.kind == .log })

        disk.makeRoom()
        #expect(try await b.request("POST", "/v1/accounts", json: ["user": "founded", "passphrase": "pb"]).status == 200)
        try await circle.enroll(b, into: "joined", approver: a)
        let keyA = try await a.request("GET", "/v1/accounts/joined/keys/current")["key"]
        #expect(try await b.request("GET", "/v1/accounts/joined/keys/current?wait=10")["key"] == keyA)
    }

    @Test("a recovery kit written to a full disk: exit 1, said, and no file left that could pass for a kit")
    func kitOnFullDisk() async throws {
        let daemon = try DaemonProcess()
        let folder = daemon.root + "/kits"
        let disk = try SmallDisk(at: folder, megabytes: 1)
        defer { disk.unmount(); daemon.remove() }
        try await daemon.start()
        #expect(try await daemon.request("POST", "/v1/accounts", json: ["user": "kit", "passphrase": "p"]).status == 200)
        try disk.fill()
        try "kit passphrase\n".write(toFile: daemon.root + "/kitpass", atomically: true, encoding: .utf8)
        let kit = folder + "/kit.bin"
        let result = try await run(DaemonProcess.binaryDirectory + "/keyvault",
                                   ["export", "--account", "kit", "--recovery-kit", kit, "--kit-passphrase-file", daemon.root + "/kitpass", "--socket", daemon.socket])
        #expect(result.status == 1, "\(result.err)")
        #expect(result.err.contains("was not written"), "\(result.err)")
        #expect(!FileManager.default.fileExists(atPath: kit))
        disk.makeRoom()
        let again = try await run(DaemonProcess.binaryDirectory + "/keyvault",
                                  ["export", "--account", "kit", "--recovery-kit", kit, "--kit-passphrase-file", daemon.root + "/kitpass", "--socket", daemon.socket])
        #expect(again.status == 0, "\(again.err)")
        #expect(((try? FileManager.default.attributesOfItem(atPath: kit)[.size] as? Int) ?? 0) > 100)
    }

    @Test("a full disk: wrong passphrases get exactly the answers a healthy disk gives")
    func fullDiskUnlock() async throws {
        let healthy = try DaemonProcess()
        let full = try DaemonProcess()
        let disk = try SmallDisk(at: full.dataDirectory, megabytes: 8)
        defer { disk.unmount(); healthy.remove(); full.remove() }
        for daemon in [healthy, full] {
            try await daemon.start()
            #expect(try await daemon.request("POST", "/v1/accounts", json: ["user": "u", "passphrase": "right"]).status == 200)
            #expect(try await daemon.request("POST", "/v1/accounts/u/lock").status == 200)
        }
        try disk.fill()
        var answers: [[String]] = []
        for daemon in [healthy, full] {
            var states: [String] = []
            for guess in ["wrong-1", "wrong-2", "wrong-3", "right"] {
                states.append(try await daemon.request("POST", "/v1/accounts/u/unlock", json: ["passphrase": guess]).state ?? "no state")
            }
            answers.append(states)
        }
        #expect(answers[0] == ["denied", "throttled", "throttled", "throttled"], "healthy: \(answers[0])")
        #expect(answers[1] == answers[0], "full disk: \(answers[1]), healthy: \(answers[0])")
        // The full disk was really hit: the daemon said it could not record the guess.
        #expect(full.logText().contains("could not record a wrong passphrase"))
        // And once the back-off has run, the right passphrase opens it, as on the healthy disk.
        try await eventually {
            try await full.request("POST", "/v1/accounts/u/unlock", json: ["passphrase": "right"]).status == 200
        }
    }

    static func lists(_ daemon: DaemonProcess, _ user: String) async throws -> Bool {
        let status = try await daemon.request("GET", "/v1/status")
        return (status.object["accounts"] as? [[String: Any]] ?? []).contains { $0["account"] as? String == user }
    }

    /// B asks to join, A approves with the code B shows. Answers whether B was approved.
    static func enrollAndApprove(_ b: DaemonProcess, _ a: DaemonProcess, _ user: String) async throws -> Bool {
        try await enrollAndApproveProblem(b, a, user) == nil
    }

    /// nil when B was approved; otherwise what went wrong.
    static func enrollAndApproveProblem(_ b: DaemonProcess, _ a: DaemonProcess, _ user: String) async throws -> String? {
        let ticket = try await b.request("POST", "/v1/accounts/\(user)/enroll", json: ["passphrase": "device passphrase", "deviceName": "b"])
        guard let deviceID = ticket["deviceId"], let code = ticket["pairingCode"] else { return "B's ticket: \(ticket.object)" }
        var listed: [String: Any] = [:]
        for _ in 0..<100 {
            listed = try await a.request("GET", "/v1/accounts/\(user)/enrollments").object
            if (listed["enrollments"] as? [[String: Any]])?.contains(where: { $0["deviceId"] as? String == deviceID }) == true { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        // A lists the request as soon as it has read it; B's reveal may come in a pass later.
        var approved = try await a.request("POST", "/v1/accounts/\(user)/enrollments/\(deviceID)/approve", json: ["pairingCode": code])
        for _ in 0..<100 where (approved["error"] ?? "").contains("has not answered yet") {
            try await Task.sleep(for: .milliseconds(50))
            approved = try await a.request("POST", "/v1/accounts/\(user)/enrollments/\(deviceID)/approve", json: ["pairingCode": code])
        }
        return approved.status == 200 ? nil : "approve: \(approved.object); A lists \(listed)"
    }
}
/// A small tmpfs mounted over a test daemon's data directory, to fill up.
/// Needs root (tests run as root on the CI machine); without it the test fails and says why.
final class SmallDisk: Sendable {
    let path: String
    var filler: String { path + "/filler" }

    init(at path: String, megabytes: Int) throws {
        self.path = path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let mounted = Process.runSync("/bin/mount", ["-t", "tmpfs", "-o", "size=\(megabytes)m,mode=0700", "tmpfs", path])
        guard mounted.status == 0 else {
            throw TestFailure("could not mount a small tmpfs to fill (full-disk tests need root): \(mounted.err)")
        }
    }

    /// Fills the disk to its last byte.
    func fill() throws {
        _ = Process.runSync("/bin/dd", ["if=/dev/zero", "of=\(filler)", "bs=64k"])
        var info = statvfs()
        guard statvfs(path, &info) == 0, info.f_bavail == 0 else { throw TestFailure("the small disk at \(path) is not full") }
    }

    func makeRoom() { try? FileManager.default.removeItem(atPath: filler) }

    func unmount() { _ = Process.runSync("/bin/umount", ["-l", path]) }
}

extension Process {
    /// Runs a tool to its end (for test set-up only): its status and standard error.
    static func runSync(_ tool: String, _ arguments: [String]) -> (status: Int32, err: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        do { try process.run() } catch { return (-1, "\(error)") }
        let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }
}
