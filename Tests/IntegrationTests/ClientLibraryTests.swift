import Foundation
import KeyVaultClient
import KeyVaultWipedBuffers
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The client library apps link (KeyVaultClient), against real daemons.
@Suite("The client library")
struct ClientLibraryTests {
    /// The answer a key read brings is read into buffers zeroed when released (`ByteBufferAllocator.wiping`
    /// on the client's connections), as the daemon's are when it writes them: no copy of the key's
    /// encoding is left in freed memory of the app's process by the library. (Nothing else in this
    /// process allocates from that heap: the daemons are other processes.)
    @Test("the buffers a key's answer is read into are zeroed when released")
    func answersReadIntoWipedBuffers() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        try await daemon.start()
        #expect(try await daemon.request("POST", "/v1/accounts", json: ["user": "wiped", "passphrase": "pw"]).status == 200)
        let client = daemon.client
        let before = WipedHeap.wipedBlocks.load(ordering: .relaxed)
        for _ in 0..<3 { #expect(try await client.key("wiped").value != nil) }
        #expect(WipedHeap.wipedBlocks.load(ordering: .relaxed) > before, "no buffer of the answers went back through the wiping heap")
    }

    @Test("typed answers: a ready key of 32 bytes; locked, unknown and invalid as refusals with their state")
    func typedAnswers() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        try await daemon.start()
        let client = daemon.client
        #expect(try await daemon.request("POST", "/v1/accounts", json: ["user": "typed", "passphrase": "pw"]).status == 200)
        let raw = try #require(try await daemon.request("GET", "/v1/accounts/typed/keys/current")["key"])

        let key = try #require(try await client.key("typed").value)
        #expect(key.generation == 1)
        #expect(key.isCurrent)
        #expect(key.keyID.hex.count == 32)
        #expect(KeyIdentifier(hex: key.keyID.hex) == key.keyID)
        #expect(KeyIdentifier(hex: key.keyID.hex.uppercased()) == nil)
        #expect(key.bytes.count == 32)
        #expect(key.bytes.withUnsafeBytes { Data($0).base64EncodedString() } == raw)
        #expect(!"\(key.bytes)".contains(raw) && "\(key.bytes)".contains("not shown"))
        #expect(try await client.key("typed", .keyID(key.keyID)).value?.generation == 1)
        #expect(try await client.health().value == "0.1.0")

        _ = try await daemon.request("POST", "/v1/accounts/typed/lock")
        guard case .refused(let locked) = try await client.key("typed") else { Issue.record("a locked account's key was not refused"); return }
        #expect(locked.state == .locked)
        guard case .refused(let unknown) = try await client.key("nobody") else { Issue.record("an unknown account was not refused"); return }
        #expect(unknown.state == .unknown)
        guard case .refused(let invalid) = try await client.key("typed", .generation(0)) else { Issue.record("generation 0 was not refused"); return }
        #expect(invalid.state == .invalid)
    }

    @Test("pending has its reason, since, retry-after and the pairing code; readyKey returns the key the moment the device is approved")
    func pendingThenReady() async throws {
        let circle = try await Circle()
        defer { circle.remove() }
        let a = try await circle.device()
        let b = try await circle.device()
        _ = try await a.request("POST", "/v1/accounts", json: ["user": "waits", "passphrase": "pa"])
        let ticket = try await b.request("POST", "/v1/accounts/waits/enroll", json: ["passphrase": "pb", "deviceName": "b"])
        let deviceID = try #require(ticket["deviceId"]), code = try #require(ticket["pairingCode"])

        guard case .pending(let pending) = try await b.client.key("waits") else { Issue.record("B's key was not pending"); return }
        #expect(pending.reason == .awaitingApproval)
        #expect(pending.since != nil)
        #expect(pending.retryAfter > .zero)
        let enrolled = try await b.client.send("POST", "/v1/accounts/waits/enroll", body: Array(#"{"passphrase":"pb","deviceName":"b"}"#.utf8))
        #expect(enrolled.status == 202)

        let waiting = Task { try await b.client.readyKey("waits", heldFor: .seconds(5)) }
        try await eventually { try await AccountStreamTests.enrollments(a, "waits").contains(deviceID) }
        #expect(try await a.request("POST", "/v1/accounts/waits/enrollments/\(deviceID)/approve", json: ["pairingCode": code]).status == 200)
        let key = try await waiting.value
        let aKey = try #require(try await a.client.key("waits").value)
        #expect(key.keyID == aKey.keyID)
        #expect(key.bytes.withUnsafeBytes { Array($0) } == aKey.bytes.withUnsafeBytes { Array($0) })
    }

    @Test("readyKey fits a daemon whose max_wait_seconds is under its hold: the ready key, and a pending one once it lands")
    func readyKeyWithinTheDaemonsLimit() async throws {
        let policy = DaemonProcess.testPolicy + "\n[limits]\nmax_wait_seconds = 5\n"
        let circle = try await Circle()
        defer { circle.remove() }
        let a = try await circle.device(policy: policy)
        let b = try await circle.device(policy: policy)
        _ = try await a.request("POST", "/v1/accounts", json: ["user": "brief", "passphrase": "pa"])
        // The default hold (30 s) is over the limit; the key is ready all the same.
        let key = try await a.client.readyKey("brief")
        #expect(key.generation == 1)

        let enrollment = try await b.client.enroll("brief", passphrase: "pb", deviceName: "b")
        let waiting = Task { try await b.client.readyKey("brief") }
        try await eventually { try await AccountStreamTests.enrollments(a, "brief").contains(enrollment.deviceID.hex) }
        #expect(try await a.request("POST", "/v1/accounts/brief/enrollments/\(enrollment.deviceID.hex)/approve",
                                    json: ["pairingCode": enrollment.pairingCode]).status == 200)
        #expect(try await waiting.value.keyID == key.keyID)
    }

    @Test("enroll answers the device ID and pairing code; the enrolling device's pending key read carries the code, and approving with it works")
    func enrollAndItsCode() async throws {
        let circle = try await Circle()
        defer { circle.remove() }
        let a = try await circle.device()
        let b = try await circle.device()
        _ = try await a.request("POST", "/v1/accounts", json: ["user": "coded", "passphrase": "pa"])
        let enrollment = try await b.client.enroll("coded", passphrase: "pb", deviceName: "phone")
        #expect(enrollment.pairingCode.count == 6 && enrollment.pairingCode.allSatisfy(\.isNumber))
        #expect(enrollment.since != nil)

        // What a sync engine that did not enroll sees: the code, on the pending read (held, or not).
        guard case .pending(let pending) = try await b.client.key("coded") else { Issue.record("B's key was not pending"); return }
        #expect(pending.reason == .awaitingApproval)
        let code = try #require(pending.pairingCode, "the pending read has no pairing code")
        #expect(code == enrollment.pairingCode)
        let raw = try await b.request("GET", "/v1/accounts/coded/keys/current?wait=1")
        #expect(raw.state == "pending" && raw["pairingCode"] == enrollment.pairingCode, "\(raw.raw.text)")
        // Asking again while the exchange waits answers the same code.
        #expect(try await b.client.enroll("coded", passphrase: "pb", deviceName: "phone") == enrollment)

        // An account the relay does not know is a refusal, thrown.
        await #expect(throws: Refusal.self) { _ = try await b.client.enroll("nobody-here", passphrase: "pb", deviceName: "phone") }

        let waiting = Task { try await b.client.readyKey("coded", heldFor: .seconds(5)) }
        try await eventually { try await AccountStreamTests.enrollments(a, "coded").contains(enrollment.deviceID.hex) }
        #expect(try await a.request("POST", "/v1/accounts/coded/enrollments/\(enrollment.deviceID.hex)/approve",
                                    json: ["pairingCode": code]).status == 200)
        #expect(try await waiting.value.generation == 1)
        guard case .ready = try await b.client.key("coded") else { Issue.record("B's key was not ready once approved"); return }
    }

    @Test("the library reads $KEYVAULT_DAEMON_UID as the CLI does: a daemon of that uid in /tmp is talked to, and refused without it",
          .enabled(if: geteuid() == 0, "running a listener as another uid needs root"))
    func daemonUIDFromTheEnvironment() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        chmod(daemon.root, 0o755)
        let folder = daemon.root + "/nobody"
        #expect(mkdir(folder, 0o755) == 0)
        #expect(chown(folder, 65534, 65534) == 0)
        let socket = folder + "/kv.sock", heard = folder + "/heard"
        _ = FileManager.default.createFile(atPath: heard, contents: nil)
        #expect(chown(heard, 65534, 65534) == 0)
        let listener = try RedTeamTests.asNobody(Self.countingListener, [socket, heard], stdout: daemon.root + "/out", stderr: daemon.root + "/err")
        defer { listener.killAndReap() }
        try await eventually { FileManager.default.fileExists(atPath: socket) }

        // An app (the example engine) with the library's defaults: under /tmp, only its own uid is expected.
        let engine = ExampleSyncEngineTests.binary
        let arguments = ["--account", "uid", "--store", daemon.root + "/records", "--stop-file", daemon.root + "/stop", "--socket", socket]
        let quiet = ["SWIFT_BACKTRACE": "enable=no"]  // the engine ends on the error it is given: no backtrace
        let refused = try await run(engine, arguments, environment: quiet)
        #expect(refused.err.contains("refusing to talk to \(socket)"), "\(refused.err)")
        #expect(refused.err.contains("$KEYVAULT_DAEMON_UID"), "\(refused.err)")
        // Named in the variable, the daemon's uid is talked to (its answer, a health check's, is not a key).
        let trusted = try await run(engine, arguments, environment: quiet.merging(["KEYVAULT_DAEMON_UID": "65534"]) { $1 })
        #expect(!trusted.err.contains("refusing to talk"), "\(trusted.err)")
        #expect(trusted.err.contains("not understood"), "\(trusted.err)")
        // A name that is no user is refused before anything is sent.
        let unknown = try await run(engine, arguments, environment: quiet.merging(["KEYVAULT_DAEMON_UID": "no-such-user-here"]) { $1 })
        #expect(unknown.err.contains("$KEYVAULT_DAEMON_UID must be a uid or a user name"), "\(unknown.err)")
        listener.signal(SIGTERM)
        _ = await listener.wait()
        #expect(Int(try String(contentsOfFile: heard, encoding: .utf8)) ?? 0 > 0, "the listener was never asked")
    }

    @Test("seal and open in a batch; the wrong aad is refused as invalid and opens nothing")
    func sealAndOpen() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        try await daemon.start()
        _ = try await daemon.request("POST", "/v1/accounts", json: ["user": "env", "passphrase": "pw"])
        let records = [SealItem(plaintext: Array("one".utf8), aad: Array("r1".utf8)), SealItem(plaintext: [])]
        let sealed = try #require(try await daemon.client.seal("env", records).value)
        #expect(sealed.envelopes.count == 2)
        #expect(sealed.generation == 1)
        let opened = try await daemon.client.open("env", [OpenItem(envelope: sealed.envelopes[0], aad: Array("r1".utf8)), OpenItem(envelope: sealed.envelopes[1])])
        #expect(opened.value == [Array("one".utf8), []])
        guard case .refused(let refusal) = try await daemon.client.open("env", [OpenItem(envelope: sealed.envelopes[0], aad: Array("r2".utf8))]) else {
            Issue.record("the wrong aad opened"); return
        }
        #expect(refusal.state == .invalid)
    }

    @Test("events carry ids; a stream resumed after an id gets exactly what it missed; after a restart it is told resync, then goes on")
    func resumableEvents() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        try await daemon.start()
        _ = try await daemon.request("POST", "/v1/accounts", json: ["user": "ev", "passphrase": "pw"])

        // A stream resumed from an id it cannot know is told resync, with the id of the last event so far.
        var probe = daemon.client.events("ev", lastEventID: "from-elsewhere").makeAsyncIterator()
        let resync0 = try #require(try await probe.next())
        #expect(resync0.name == "resync")
        let firstID = try #require(resync0.id)
        let (epoch, number) = try #require(Self.split(firstID))

        // Two events; a stream resumed after that id is given exactly those two, in order, with the next ids.
        _ = try await daemon.request("POST", "/v1/accounts/ev/lock")
        _ = try await daemon.request("POST", "/v1/accounts/ev/unlock", json: ["passphrase": "pw"])
        var resumed = daemon.client.events("ev", lastEventID: firstID).makeAsyncIterator()
        let missed = [try await resumed.next(), try await resumed.next()]
        #expect(missed.map { $0?.name } == ["locked", "unlocked"])
        #expect(missed.map { $0?.id } == ["\(epoch)-\(number + 1)", "\(epoch)-\(number + 2)"])
        // The probe, live since before them, saw the same two.
        #expect([try await probe.next()?.id, try await probe.next()?.id] == missed.map { $0?.id })

        // The daemon restarts: the stream reconnects by itself, with the last id, and is told resync.
        await daemon.stop()
        try await daemon.start()
        let resync = try await resumed.next()
        #expect(resync?.name == "resync")
        #expect(resync?.id?.hasPrefix(epoch) == false)
        _ = try await daemon.request("POST", "/v1/accounts/ev/lock")
        #expect(try await resumed.next()?.name == "locked")
        // A rotation's event names its generation (a number on the wire, its text in `fields`) and key.
        _ = try await daemon.request("POST", "/v1/accounts/ev/unlock", json: ["passphrase": "pw"])
        #expect(try await resumed.next()?.name == "unlocked")
        let rotation = try await daemon.request("POST", "/v1/accounts/ev/rotate", json: ["promote": "now"])
        let rotated = try await resumed.next()
        #expect(rotated?.name == "rotated")
        #expect(rotated?.fields["generation"] == "2")
        #expect(rotated?.fields["keyId"] == rotation["keyId"])
    }

    @Test("a socket in a folder others may write is refused before a byte is sent, even when served by the expected uid")
    func untrustedFolder() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        chmod(daemon.root, 0o755)
        let folder = daemon.root + "/open"
        #expect(mkdir(folder, 0o777) == 0)
        #expect(chmod(folder, 0o777) == 0)
        let socket = folder + "/kv.sock", heard = folder + "/heard"
        let listener = try ChildProcess("/usr/bin/python3", ["-c", Self.countingListener, socket, heard],
                                        stdoutPath: folder + "/out", stderrPath: folder + "/err")
        defer { listener.killAndReap() }
        try await eventually { FileManager.default.fileExists(atPath: socket) }

        await #expect(throws: KeyVaultClientError.self) { _ = try await KeyVaultClient(socketPath: socket, daemonUID: .own).health() }
        do {
            _ = try await KeyVaultClient(socketPath: socket).health()
            Issue.record("a socket in a folder anyone may write was trusted")
        } catch let error as KeyVaultClientError {
            guard case .untrustedPath(_, let reason) = error else { Issue.record("\(error)"); return }
            #expect(reason.contains("can be written by others"))
        }
        _ = await listener.wait()
        #expect(try String(contentsOfFile: heard, encoding: .utf8) == "0", "the listener was sent bytes")
    }

    @Test("by default, a socket of another uid is trusted only where no one but that uid or root could have put it, and never through a link")
    func socketOwnerInAFolderOnlyItOwns() async throws {
        // Under /run (root's, 0755): not /tmp, where anyone can make a folder of their own.
        var template = Array("/run/kvtest-XXXXXX".utf8CString)
        let made = try #require(mkdtemp(&template), "cannot make a folder under /run (tests run as root)")
        let root = String(cString: made)
        defer { try? FileManager.default.removeItem(atPath: root) }
        chmod(root, 0o755)
        let folder = root + "/nobody"
        #expect(mkdir(folder, 0o755) == 0)
        #expect(chown(folder, 65534, 65534) == 0)
        let socket = folder + "/kv.sock", heard = root + "/heard"
        _ = FileManager.default.createFile(atPath: heard, contents: nil)
        #expect(chown(heard, 65534, 65534) == 0)
        let listener = try RedTeamTests.asNobody(Self.countingListener, [socket, heard], stdout: root + "/out", stderr: root + "/err")
        defer { listener.killAndReap() }
        try await eventually { FileManager.default.fileExists(atPath: socket) }

        // A link to it from a folder of another user's making (a squatted /tmp/keyvaultd-UID): the
        // link's maker chose where it points, so the default expects this process's own uid there.
        var squatTemplate = Array("/tmp/kvsquat-XXXXXX".utf8CString)
        let squatRoot = String(cString: try #require(mkdtemp(&squatTemplate)))
        defer { try? FileManager.default.removeItem(atPath: squatRoot) }
        chmod(squatRoot, 0o755)
        #expect(mkdir(squatRoot + "/keyvaultd-0", 0o755) == 0)
        #expect(symlink(socket, squatRoot + "/keyvaultd-0/keyvaultd.sock") == 0)
        #expect(lchown(squatRoot + "/keyvaultd-0/keyvaultd.sock", 65534, 65534) == 0)
        #expect(chown(squatRoot + "/keyvaultd-0", 65534, 65534) == 0)
        do {
            _ = try await KeyVaultClient(socketPath: squatRoot + "/keyvaultd-0/keyvaultd.sock").send("GET", "/v1/health")
            Issue.record("a link planted by another user led the client to that user's socket")
        } catch KeyVaultClientError.wrongPeer(_, let expected, let actual) {
            #expect(expected == geteuid())
            #expect(actual == 65534)
        }

        // Its owner, uid 65534, is the only one who could have put it there: the default talks to it.
        let answer = try await KeyVaultClient(socketPath: socket).send("GET", "/v1/health")
        #expect(answer.status == 200)
        // Told to expect its own uid, the client refuses it, naming both.
        do {
            _ = try await KeyVaultClient(socketPath: socket, daemonUID: .own).send("GET", "/v1/health")
            Issue.record("a socket of uid 65534 was trusted as this uid's")
        } catch KeyVaultClientError.wrongPeer(_, let expected, let actual) {
            #expect(expected == geteuid())
            #expect(actual == 65534)
        }
        listener.killAndReap()
    }

    @Test("a daemon that takes no connection (stopped, its queue full): unreachable after a bounded wait, never a hang")
    func fullQueue() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        let socket = daemon.root + "/full.sock", ready = daemon.root + "/ready"
        // Listens, never accepts, and fills its own queue until a connect would block.
        let script = """
            import socket, sys, time
            path, ready = sys.argv[1], sys.argv[2]
            s = socket.socket(socket.AF_UNIX); s.bind(path); s.listen(0)
            held = []
            while True:
                c = socket.socket(socket.AF_UNIX); c.setblocking(False)
                try:
                    c.connect(path); held.append(c)
                except BlockingIOError:
                    break
            open(ready, "w").write(str(len(held)))
            time.sleep(60)
            """
        let listener = try ChildProcess("/usr/bin/python3", ["-c", script, socket, ready], stdoutPath: daemon.root + "/out", stderrPath: daemon.root + "/err")
        defer { listener.killAndReap() }
        try await eventually { FileManager.default.fileExists(atPath: ready) }
        do {
            _ = try await KeyVaultClient(socketPath: socket).health()
            Issue.record("a daemon that takes no connection answered")
        } catch KeyVaultClientError.unreachable(_, let reason) {
            #expect(reason.contains("did not take the connection"), "\(reason)")
        }
    }

    /// A listener that answers every request with a health answer, and writes how many bytes it heard when it ends.
    static let countingListener = """
        import os, socket, sys, signal
        path, out = sys.argv[1], sys.argv[2]
        total = 0
        def done(*_):
            open(out, "w").write(str(total)); sys.exit(0)
        signal.signal(signal.SIGTERM, done)
        s = socket.socket(socket.AF_UNIX); s.bind(path + ".new"); s.listen(8); os.rename(path + ".new", path); s.settimeout(5)
        try:
            while True:
                c, _ = s.accept(); c.settimeout(2)
                try:
                    while True:
                        d = c.recv(65536)
                        if not d: break
                        total += len(d)
                        c.sendall(b'HTTP/1.1 200 OK\\r\\nContent-Type: application/json\\r\\nContent-Length: 35\\r\\n\\r\\n{"state":"ready","version":"0.1.0"}')
                except Exception:
                    pass
                c.close()
        except socket.timeout:
            pass
        done()
        """

    static func split(_ id: String) -> (String, Int)? {
        let parts = id.split(separator: "-")
        guard parts.count == 2, let number = Int(parts[1]) else { return nil }
        return (String(parts[0]), number)
    }
}
