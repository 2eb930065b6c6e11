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
#if canImport(Glibc)
import Glibc
#endif

/// The holes a red team found, each tried again as the attacker on the same
/// machine would (issue: "Security holes a red team found").
@Suite("An attacker on the same machine", .serialized)
struct RedTeamTests {
    static let nobody: UInt32 = 65534

    /// Runs `script` with python3 as uid 65534 (another local user).
    static func asNobody(_ script: String, _ arguments: [String], stdout: String, stderr: String) throws -> ChildProcess {
        try ChildProcess("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c", script] + arguments,
                         stdoutPath: stdout, stderrPath: stderr)
    }

    /// keyvaultd on `socket`, not waited for: the process, to see it refuse.
    static func daemonRefusing(_ daemon: DaemonProcess, socket: String) async throws -> (status: Int32, log: String) {
        let process = try ChildProcess(DaemonProcess.binaryDirectory + "/keyvaultd",
                                       ["--data-dir", daemon.dataDirectory, "--socket", socket, "--policy", daemon.policyDirectory],
                                       stdoutPath: daemon.logPath, stderrPath: daemon.logPath)
        // A daemon that started instead of refusing is stopped after 30 s, and the test fails on its status.
        let watchdog = Task { try await Task.sleep(for: .seconds(30)); process.signal(SIGKILL) }
        let status = await process.wait()
        watchdog.cancel()
        return (status, daemon.logText())
    }

    @Test("a socket folder another uid owns, or others can write: the daemon refuses to start there and says why",
          .enabled(if: geteuid() == 0, "making a folder of another uid needs root"))
    func squattedSocketFolder() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        // What `nobody` does before the user starts keyvaultd: the folder, world-writable, its own.
        let squatted = daemon.root + "/keyvaultd-squatted"
        #expect(mkdir(squatted, 0o777) == 0)
        #expect(chown(squatted, Self.nobody, Self.nobody) == 0)
        #expect(chmod(squatted, 0o777) == 0)
        let refused = try await Self.daemonRefusing(daemon, socket: squatted + "/keyvaultd.sock")
        #expect(refused.status != 0)
        #expect(refused.log.contains("belongs to uid 65534, not to this daemon's uid 0"), "\(refused.log)")
        #expect(!FileManager.default.fileExists(atPath: squatted + "/keyvaultd.sock"))

        // The user's own folder, but others may write it: refused too.
        let open = daemon.root + "/keyvaultd-open"
        #expect(mkdir(open, 0o700) == 0)
        #expect(chmod(open, 0o777) == 0)
        let writable = try await Self.daemonRefusing(daemon, socket: open + "/keyvaultd.sock")
        #expect(writable.status != 0)
        #expect(writable.log.contains("can be written by others (mode 777)"), "\(writable.log)")

        // A folder that does not exist yet is made 0700, and served from.
        let fresh = daemon.root + "/keyvaultd-fresh"
        try await daemon.start(extraArguments: ["--socket", fresh + "/keyvaultd.sock"], waitUntilReady: false)
        try await eventually { SocketPath.isAnswering(fresh + "/keyvaultd.sock") }
        var info = stat()
        #expect(lstat(fresh, &info) == 0 && info.st_mode & 0o7777 == 0o700)
    }

    @Test("the CLI refuses a socket served by another uid, naming both, and sends it nothing",
          .enabled(if: geteuid() == 0, "running an impostor as another uid needs root"))
    func impostorSocket() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        chmod(daemon.root, 0o755)
        let folder = daemon.root + "/taken"
        #expect(mkdir(folder, 0o777) == 0)
        #expect(chmod(folder, 0o777) == 0)
        let socket = folder + "/keyvaultd.sock", heard = folder + "/heard"
        // The impostor: answers "ready" to anything and counts the bytes it was sent.
        let impostor = try Self.asNobody("""
            import os, socket, sys
            path, out = sys.argv[1], sys.argv[2]
            s = socket.socket(socket.AF_UNIX); s.bind(path + ".new"); s.listen(8); os.rename(path + ".new", path); s.settimeout(30)
            total = 0
            try:
                c, _ = s.accept(); c.settimeout(3)
                try:
                    while True:
                        d = c.recv(65536)
                        if not d: break
                        total += len(d)
                        c.sendall(b'HTTP/1.1 200 OK\\r\\nContent-Length: 17\\r\\n\\r\\n{"state":"ready"}')
                except Exception:
                    pass
            except socket.timeout:
                pass
            open(out, "w").write(str(total))
            """, [socket, heard], stdout: folder + "/impostor.out", stderr: folder + "/impostor.err")
        try await eventually { FileManager.default.fileExists(atPath: socket) }
        let passphraseFile = daemon.root + "/passphrase"
        try "the user's passphrase\n".write(toFile: passphraseFile, atomically: true, encoding: .utf8)

        let (status, out, err) = try await run(DaemonProcess.binaryDirectory + "/keyvault",
                                               ["--socket", socket, "unlock", "-a", "alice", "--passphrase-file", passphraseFile])
        #expect(status != 0)
        #expect(err.contains("served by uid 65534, not by uid 0"), "\(err)")
        #expect(!out.contains("ready"))
        // If the CLI never connected, the impostor still waits in accept: a connection that sends nothing ends it.
        _ = try? RawSocket(path: socket)
        _ = await impostor.wait()
        #expect(try String(contentsOfFile: heard, encoding: .utf8) == "0", "the impostor was sent bytes")

        // Told the daemon runs as that uid on purpose, the CLI talks to it.
        let (trusting, _, _) = try await run(DaemonProcess.binaryDirectory + "/keyvault", ["--daemon-uid", "65534", "--socket", socket, "status"])
        #expect(trusting != 0)  // nobody listens any more: refused for that, not for the peer
    }

    @Test("a doorbell replaced by a link (to the vault, or to another file) is not written through")
    func symlinkedDoorbell() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        let shared = daemon.root + "/shared"
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: true)
        let relayPath = shared + "/relay.sqlite", doorbell = relayPath + "-doorbell"
        daemon.relay = "sqlite:" + relayPath
        try await daemon.start()
        #expect(try await daemon.request("POST", "/v1/accounts", json: ["user": "door", "passphrase": "pw"]).status == 200)
        let key = try #require(try await daemon.request("GET", "/v1/accounts/door/keys/current?wait=10")["key"])
        let vault = daemon.dataDirectory + "/" + Vault.fileName
        let canary = daemon.root + "/canary", precious = "precious bytes that must stay"
        try precious.write(toFile: canary, atomically: true, encoding: .utf8)

        var round = 0
        for target in [vault, canary] {
            for link in [{ symlink(target, doorbell) }, { link(target, doorbell) }] {
                round += 1
                unlink(doorbell)
                #expect(link() == 0)
                let vaultSize = try FileManager.default.attributesOfItem(atPath: vault)[.size] as? Int ?? 0
                let rotated = try await daemon.request("POST", "/v1/accounts/door/rotate", json: ["promote": "now"])
                #expect(rotated.status == 200, "round \(round): \(rotated.object)")
                #expect(try FileManager.default.attributesOfItem(atPath: vault)[.size] as? Int ?? 0 >= vaultSize, "round \(round)")
                #expect(try String(contentsOfFile: canary, encoding: .utf8) == precious, "round \(round)")
            }
        }
        // The vault is whole: a restart opens it and serves every generation.
        #expect(await daemon.stop() == 0)
        unlink(doorbell)
        try await daemon.start()
        #expect(try await daemon.request("POST", "/v1/accounts/door/unlock", json: ["passphrase": "pw"]).status == 200)
        #expect(try await daemon.request("GET", "/v1/accounts/door/keys/1")["key"] == key)
        #expect(try await daemon.request("GET", "/v1/accounts/door/keys/current").object["generation"] as? Int == 1 + round)
    }

    @Test("SIGKILL at random moments of a revoke: after restarts every remaining device holds a new current key, the revoked one does not")
    func killDuringRevokes() async throws {
        let circle = try await Circle()
        defer { circle.remove() }
        let a = try await circle.device()
        let b = try await circle.device()
        #expect(try await a.request("POST", "/v1/accounts", json: ["user": "rv", "passphrase": "pa"]).status == 200)
        try await circle.enroll(b, into: "rv", approver: a, name: "b")
        #expect(try await b.request("GET", "/v1/accounts/rv/keys/current?wait=20").status == 200)

        for round in 1...20 {
            let x = try await circle.device()
            let xID = try await circle.enroll(x, into: "rv", approver: a, name: "x\(round)")
            let held = try #require(try await x.request("GET", "/v1/accounts/rv/keys/current?wait=20")["key"], "round \(round)")

            let revoke = Task { try? await a.request("DELETE", "/v1/accounts/rv/devices/\(xID)") }
            try await Task.sleep(for: .microseconds(Int.random(in: 0...20_000)))
            await a.kill9()
            _ = await revoke.value
            try await a.start()
            #expect(try await a.request("POST", "/v1/accounts/rv/unlock", json: ["passphrase": "pa"]).status == 200, "round \(round)")
            // A kill before the revoke landed leaves X trusted: the person revokes again.
            let devices = try await a.request("GET", "/v1/accounts/rv/devices").object["devices"] as? [[String: Any]] ?? []
            if devices.contains(where: { $0["deviceId"] as? String == xID && $0["status"] as? String == "trusted" }) {
                #expect(try await a.request("DELETE", "/v1/accounts/rv/devices/\(xID)").status == 200, "round \(round)")
            }
            // The owed rotation is paid at the unlock: A's current key is one X never held, and B gets it.
            var current: (generation: Int, key: String)?
            try await eventually {
                let reply = try await a.request("GET", "/v1/accounts/rv/keys/current")
                guard let generation = reply.object["generation"] as? Int, let key = reply["key"], key != held else { return false }
                current = (generation, key)
                return true
            }
            let now = try #require(current, "round \(round): A still serves the key X holds")
            #expect(try await b.request("GET", "/v1/accounts/rv/keys/\(now.generation)?wait=20")["key"] == now.key, "round \(round): B")
            let atX = try await x.request("GET", "/v1/accounts/rv/keys/\(now.generation)?wait=1")
            #expect(atX["key"] == nil, "round \(round): the revoked device holds the new key")
            #expect(!(try await x.request("GET", "/v1/accounts/rv/keys/current").raw.text.contains(now.key)), "round \(round)")
            x.remove()
        }
        for (name, device) in [("A", a), ("B", b)] {
            // A revoked device's old acknowledgements are refused when read again (its word no longer counts): not these.
            let refusals = device.logText().split(separator: "\n").filter { $0.contains("refused relay record") && !$0.contains("kind=ack") }
            #expect(refusals.isEmpty, "\(name): \(refusals.joined(separator: "\n"))")
        }
    }

    @Test("an import of a kit for an account outside the caller's scope is forbidden and creates nothing")
    func importOutsideScope() async throws {
        let elsewhere = try DaemonProcess()
        defer { elsewhere.remove() }
        try await elsewhere.start()
        func kit(_ account: String) async throws -> String {
            #expect(try await elsewhere.request("POST", "/v1/accounts", json: ["user": account, "passphrase": "pw"]).status == 200)
            return try #require(try await elsewhere.request("POST", "/v1/accounts/\(account)/recovery-kit", json: ["kitPassphrase": "kit pw"])["kit"])
        }
        let victim = try await kit("tenantB.victim"), own = try await kit("tenantA.own")

        let scoped = try DaemonProcess(policy: """
            [kdf-test]
            passes = 1
            memory_kib = 64

            [[rule]]
            uid = "self"
            accounts = ["tenantA.*"]
            allow = ["*"]
            """)
        defer { scoped.remove() }
        try await scoped.start()
        let refused = try await scoped.request("POST", "/v1/accounts/import", json: ["kit": victim, "kitPassphrase": "kit pw", "passphrase": "mine"])
        #expect(refused.status == 403)
        #expect(refused.state == "forbidden")
        #expect(refused["error"]?.contains("tenantB.victim") == true)
        let accounts = try await scoped.request("GET", "/v1/status").object["accounts"] as? [Any] ?? []
        #expect(accounts.isEmpty)
        #expect(try await scoped.request("GET", "/v1/accounts/tenantB.victim/keys/current").status == 403)
        // Inside its scope, the same caller imports.
        let imported = try await scoped.request("POST", "/v1/accounts/import", json: ["kit": own, "kitPassphrase": "kit pw", "passphrase": "mine"])
        #expect(imported.status == 200, "\(imported.object)")
    }

    /// A kit whose unauthenticated header asks Argon2id for `passes` over `memory` bytes.
    static func forgedKit(account: String, passes: UInt64, memory: UInt64) -> String {
        var header = FieldWriter()
        header.string(Labels.recoveryKit)
        header.string(account)
        header.u64(passes)
        header.u64(memory)
        header.bytes([UInt8](repeating: 7, count: 16))
        var kit = FieldWriter()
        kit.bytes(header.bytes)
        kit.bytes([UInt8](repeating: 9, count: 80))
        return Data(kit.bytes).base64EncodedString()
    }

    @Test("a kit whose header asks more than the policy allows is refused before any KDF work")
    func costlyKit() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        try await daemon.start()
        for (passes, memory) in [(UInt64(8), UInt64(1) << 30), (2, 64 * 1024), (1, 128 * 1024)] {
            let answer = try await daemon.request("POST", "/v1/accounts/import", json: [
                "kit": Self.forgedKit(account: "costly", passes: passes, memory: memory), "kitPassphrase": "x", "passphrase": "y"])
            #expect(answer.status == 400)
            #expect(answer["error"]?.contains("above what this daemon's policy allows for kits") == true, "\(answer.object)")
        }
        // At the policy's own cost the KDF runs, and the forged body fails as a changed kit.
        let atCost = try await daemon.request("POST", "/v1/accounts/import", json: [
            "kit": Self.forgedKit(account: "costly", passes: 1, memory: 64 * 1024), "kitPassphrase": "x", "passphrase": "y"])
        #expect(atCost.state == "denied", "\(atCost.object)")
        #expect(try await daemon.request("GET", "/v1/accounts/costly/keys/current").status == 404)
    }

    /// Granted nothing, the flood takes no place at all; granted `health`, it takes at most three quarters.
    @Test("a flood of connections from another uid does not shut out the sync engine",
          .enabled(if: geteuid() == 0, "connecting as another uid needs root"), arguments: [false, true])
    func floodFromAnotherUID(grantedHealth: Bool) async throws {
        let daemon = try DaemonProcess(policy: DaemonProcess.testPolicy + (grantedHealth ? """

            [[rule]]
            uid = "65534"
            accounts = ["*"]
            allow = ["health"]
            """ : ""))
        defer { daemon.remove() }
        try await daemon.start(extraArguments: ["--request-timeout", "2"])
        #expect(try await daemon.request("POST", "/v1/accounts", json: ["user": "engine", "passphrase": "pw"]).status == 200)
        let key = try #require(try await daemon.request("GET", "/v1/accounts/engine/keys/current")["key"])
        chmod(daemon.root, 0o755)
        chmod(daemon.socket, 0o666)
        // 1,100 connections that each send one byte, reopened as soon as they are closed, for 8 s.
        let flood = try Self.asNobody("""
            import socket, sys, time, resource, select
            path = sys.argv[1]
            soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            def opened():
                s = socket.socket(socket.AF_UNIX); s.setblocking(False)
                try:
                    s.connect(path); s.send(b"G")
                except OSError:
                    pass
                return s
            conns = [opened() for _ in range(1100)]
            end = time.time() + 8
            reopened = 0
            while time.time() < end:
                readable, _, _ = select.select(conns[:1000], [], [], 0.05) if conns else ([], [], [])
                for s in readable:
                    try:
                        gone = not s.recv(4096)
                    except OSError:
                        gone = True
                    if gone:
                        conns.remove(s); s.close(); conns.append(opened()); reopened += 1
            print(reopened)
            """, [daemon.socket], stdout: daemon.root + "/flood.out", stderr: daemon.root + "/flood.err")
        try await Task.sleep(for: .seconds(1))
        var served = 0
        for _ in 0..<100 {
            if try await daemon.request("GET", "/v1/accounts/engine/keys/current")["key"] == key { served += 1 }
        }
        #expect(served == 100, "the sync engine was served \(served) reads of 100 during the flood")
        let connections = try await daemon.request("GET", "/v1/server").object["connections"] as? [String: Any] ?? [:]
        if grantedHealth {
            #expect(connections["maxPerCaller"] as? Int == 768, "\(connections)")
        } else {
            #expect(connections["forbiddenByPolicyTotal"] as? Int ?? 0 > 0, "\(connections)")
        }
        _ = await flood.wait()
        #expect(try await daemon.request("GET", "/v1/accounts/engine/keys/current")["key"] == key)
    }

    @Test("1 MB rows and hundreds of junk shares for a locked device: what it keeps is bounded")
    func junkSharesForALockedDevice() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        let relayPath = daemon.root + "/relay.sqlite"
        daemon.relay = "sqlite:" + relayPath
        try await daemon.start()
        #expect(try await daemon.request("POST", "/v1/accounts", json: ["user": "lk", "passphrase": "pw"]).status == 200)
        let key = try #require(try await daemon.request("GET", "/v1/accounts/lk/keys/current?wait=10")["key"])
        let status = try await daemon.request("GET", "/v1/status").object["accounts"] as? [[String: Any]] ?? []
        let device = try #require(status.first?["deviceId"] as? String)
        #expect(try await daemon.request("POST", "/v1/accounts/lk/lock").status == 200)

        // What a hostile relay (anyone who can write the relay file) sends the locked device.
        func junk(_ count: Int, bytes: Int) -> String {
            """
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(count))
            INSERT INTO records (kind, account, recipient, log_seq, body, created_at)
            SELECT 'share', 'lk', '\(device)', NULL, randomblob(\(bytes)), 0 FROM n;
            """
        }
        let inserted = try await run("/usr/bin/sqlite3", [relayPath, junk(50, bytes: 1 << 20) + junk(400, bytes: 300)])
        #expect(inserted.status == 0, "\(inserted.err)")
        try "1".write(toFile: relayPath + "-doorbell", atomically: false, encoding: .utf8)

        try await eventually { daemon.logText().contains("shares already wait for an unlock") }
        let vault = daemon.dataDirectory + "/" + Vault.fileName
        let kept = try await run("/usr/bin/sqlite3", [vault, "SELECT count(*) || ' ' || coalesce(sum(length(body)), 0) FROM relay_notes WHERE kind = 'share'"])
        let figures = kept.out.split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        #expect(figures.count == 2 && figures[0] <= 256 && figures[1] <= 256 * KeyShare.maxSealedByteCount, "kept: \(kept.out)")
        var folderBytes = 0
        for name in try FileManager.default.contentsOfDirectory(atPath: daemon.dataDirectory) {
            folderBytes += try FileManager.default.attributesOfItem(atPath: daemon.dataDirectory + "/" + name)[.size] as? Int ?? 0
        }
        #expect(folderBytes < 8 << 20, "the data folder holds \(folderBytes) bytes")
        #expect(daemon.logText().contains("a share of 1048576 bytes") || daemon.logText().contains("a share of 0 bytes"))

        // Unlocked, the junk fails to open (refused, logged), and the account serves on.
        #expect(try await daemon.request("POST", "/v1/accounts/lk/unlock", json: ["passphrase": "pw"]).status == 200)
        #expect(try await daemon.request("GET", "/v1/accounts/lk/keys/current")["key"] == key)
    }

    /// Every byte of `pid`'s readable memory, region by region (root reads another process's
    /// memory even when it made itself undumpable).
    static func memory(of pid: Int32) throws -> [Data] {
        let maps = try String(contentsOfFile: "/proc/\(pid)/maps", encoding: .utf8)
        guard let mem = FileHandle(forReadingAtPath: "/proc/\(pid)/mem") else { throw TestFailure("cannot open /proc/\(pid)/mem") }
        defer { try? mem.close() }
        var regions: [Data] = []
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 2, fields[1].hasPrefix("r"), !line.hasSuffix("[vvar]"), !line.hasSuffix("[vsyscall]") else { continue }
            let bounds = fields[0].split(separator: "-").compactMap { UInt64($0, radix: 16) }
            guard bounds.count == 2 else { continue }
            do {
                try mem.seek(toOffset: bounds[0])
                if let data = try mem.read(upToCount: Int(bounds[1] - bounds[0])) { regions.append(data) }
            } catch {
                continue  // a region that cannot be read (a guard page) holds nothing
            }
        }
        return regions
    }

    @Test("no passphrase stays in the daemon's memory after create, unlock, passwd, recovery-kit and import",
          .enabled(if: geteuid() == 0, "reading another process's memory needs root"))
    func passphrasesLeaveNoTrace() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        try await daemon.start()
        let first = "memscan first passphrase 7f3a", second = "memscan second passphrase 91c2"
        let kitPassphrase = "memscan kit passphrase 4be0", imported = "memscan imported passphrase 2d8e"
        // Escaped in the JSON (\u0020 for a space) on one route, as a client may send it.
        #expect(try await daemon.request("POST", "/v1/accounts", json: ["user": "mem", "passphrase": first]).status == 200)
        #expect(try await daemon.request("POST", "/v1/accounts/mem/lock").status == 200)
        #expect(try await daemon.request("POST", "/v1/accounts/mem/unlock", json: ["passphrase": first]).status == 200)
        #expect(try await daemon.request("POST", "/v1/accounts/mem/passphrase", json: ["old": first, "new": second]).status == 200)
        let kit = try #require(try await daemon.request("POST", "/v1/accounts/mem/recovery-kit", json: ["kitPassphrase": kitPassphrase])["kit"])
        #expect(try await daemon.request("DELETE", "/v1/accounts/mem").status == 200)
        let control = "memscan control device name 55aa"
        let restored = try await daemon.request("POST", "/v1/accounts/import", json: ["kit": kit, "kitPassphrase": kitPassphrase, "passphrase": imported,
                                                                                        "deviceName": control])
        #expect(restored.status == 200, "\(restored.object)")
        #expect(try await daemon.request("POST", "/v1/accounts/mem/lock").status == 200)
        // A wrong one too: refused, and gone as well.
        #expect(try await daemon.request("POST", "/v1/accounts/mem/unlock", json: ["passphrase": first]).status == 401)

        let pid = try #require(daemon.process?.pid)
        // The scan sees the heap: the device name, sent the same way and kept, is found.
        #expect(try Self.memory(of: pid).contains { $0.range(of: Data(control.utf8)) != nil }, "the scan does not see what the daemon keeps")
        for secret in [first, second, kitPassphrase, imported] {
            let needle = Data(secret.utf8)
            let hits = try Self.memory(of: pid).filter { $0.range(of: needle) != nil }.count
            #expect(hits == 0, "'\(secret)' is in \(hits) region(s) of the daemon's memory")
        }
    }

    @Test("several processes opening one fresh SQLite store at once, many times")
    func processesOpeningAFreshStore() async throws {
        var template = Array("/tmp/kvfresh-XXXXXX".utf8CString)
        let root = String(cString: try #require(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: root) }
        let issuer = try await TestIssuer.make(in: root)
        for round in 1...12 {
            let store = "sqlite:\(root)/store-\(round).sqlite"
            // Every instance that started is stopped, whether or not the others did.
            let started = await withTaskGroup(of: Result<RelayServiceProcess, any Error>.self) { group in
                for instance in 0..<4 {
                    group.addTask {
                        do { return .success(try await RelayServiceProcess.start(store: store, issuer: issuer, root: root, name: "r\(round)-\(instance)")) }
                        catch { return .failure(error) }
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            let relays = started.compactMap { try? $0.get() }
            for case .failure(let error) in started { Issue.record("round \(round): \(error)") }
            for relay in relays {
                #expect(await relay.stop() == 0, "round \(round)")
                #expect(!(try String(contentsOfFile: relay.logPath, encoding: .utf8)).contains("locked"), "round \(round)")
            }
        }
    }
}
