import Foundation
import Testing

/// The CLI as a script meets it: each rough edge a user reported, tried again.
@Suite("The keyvault CLI in scripts")
struct CLIScriptTests {
    static let cli = DaemonProcess.binaryDirectory + "/keyvault"

    @Test("the exit statuses are documented in --help and the README: 0 ready, 75 pending, 77 locked, 2 unreachable, 64 usage, 1 other")
    func exitCodesDocumented() async throws {
        let help = try await run(Self.cli, ["--help"])
        #expect(help.status == 0)
        let text = help.out.replacingOccurrences(of: "\n", with: " ").replacingOccurrences(of: "  ", with: " ")
        let readme = try String(contentsOfFile: SystemdUnitTests.repository + "/README.md", encoding: .utf8)
            .replacingOccurrences(of: "\n", with: " ")
        #expect(readme.contains("77 `locked`"), "the README's exit statuses do not name 77 for locked")
        for needle in ["0 ready", "75 pending", "77 locked", "2 the daemon cannot be reached", "64 a usage error", "1 anything else"] {
            #expect(text.contains(needle), "--help does not say '\(needle)'")
        }
    }

    @Test("through pipes: a plaintext larger than a pipe's buffer comes back whole; an open to a full disk, or a seal from a standard input that cannot be read, exits 1 and says why; events piped to `head -1` end at the next event, 141")
    func pipes() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        try await daemon.start()
        #expect(try await daemon.request("POST", "/v1/accounts", json: ["user": "pipe", "passphrase": "pa"]).status == 200)
        try Data((0..<30_000).map { _ in UInt8.random(in: 0...255) }).write(to: URL(fileURLWithPath: daemon.root + "/plain"))
        let script = """
            set -u
            cd "$1"; K="$2"; S="$3"
            "$K" seal -a pipe --socket "$S" < plain | cat > envelope || { echo "seal failed"; exit 1; }
            "$K" open -a pipe --socket "$S" < envelope | cat > back || { echo "open failed"; exit 1; }
            cmp -s plain back || { echo "the plaintext did not come back whole"; exit 1; }
            if "$K" open -a pipe --socket "$S" < envelope > /dev/full 2> full.err; then echo "an open to a full disk exited 0"; exit 1; fi
            grep -q "No space left" full.err || { echo "the full disk was not named: $(cat full.err)"; exit 1; }
            if "$K" seal -a pipe --socket "$S" < . > sealed 2> dir.err; then echo "a seal from a directory exited 0"; exit 1; fi
            [ ! -s sealed ] || { echo "a seal from a directory printed an envelope"; exit 1; }
            grep -q "cannot read standard input" dir.err || { echo "the unreadable input was not named: $(cat dir.err)"; exit 1; }
            # A resumed stream from an id it does not know begins with resync: head takes it and goes.
            ( set -o pipefail; timeout 30 "$K" events -a pipe --socket "$S" --last-event-id x | head -1 > first; echo $? > status ) &
            while [ ! -s first ]; do sleep 0.05; done
            "$K" lock -a pipe --socket "$S" > /dev/null
            wait
            echo "events: $(cat status)"
            """
        let result = try await run("/bin/bash", ["-c", script, "pipes", daemon.root, Self.cli, daemon.socket])
        #expect(result.status == 0, "\(result.out) \(result.err)")
        #expect(result.out.contains("events: 141"), "\(result.out) \(result.err)")
    }

    @Test("a daemon that cannot be reached (no socket, or one left behind): exit 2, a sentence naming the socket, why, and where it comes from")
    func unreachable() async throws {
        let result = try await run(Self.cli, ["status"], environment: ["KEYVAULT_SOCKET": "/tmp/keyvault-no-such-daemon.sock"])
        #expect(result.status == 2, "\(result.err)")
        #expect(result.err.contains("cannot reach keyvaultd at /tmp/keyvault-no-such-daemon.sock"))
        #expect(result.err.contains("$KEYVAULT_SOCKET"))
        #expect(result.err.contains("there is no socket at that path"), "\(result.err)")
        #expect(result.out.isEmpty)

        // A socket a stopped daemon left behind: still 2, said as such.
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        try await daemon.start()
        await daemon.kill9()
        let stale = try await run(Self.cli, ["status", "--socket", daemon.socket])
        #expect(stale.status == 2, "\(stale.err)")
        #expect(stale.err.contains("nothing listens on that socket"), "\(stale.err)")
    }

    @Test("an invalid account ID: exit 64 with the reason, under the subcommand's usage, never the root command's")
    func invalidAccount() async throws {
        let result = try await run(Self.cli, ["key", "get", "-a", "bob@example.com"], environment: ["KEYVAULT_SOCKET": "/tmp/unused.sock"])
        #expect(result.status == 64)
        #expect(result.err.contains("the account ID may contain only"))
        #expect(result.err.contains("keyvault key get"))
        #expect(!result.err.contains("SUBCOMMANDS"), "\(result.err)")
    }

    @Test("--wait -5 is refused for its value (64), not as a missing one")
    func negativeWait() async throws {
        let result = try await run(Self.cli, ["key", "get", "-a", "alice", "--wait", "-5"], environment: ["KEYVAULT_SOCKET": "/tmp/unused.sock"])
        #expect(result.status == 64)
        #expect(result.err.contains("--wait takes a whole number of seconds from 0, not '-5'"), "\(result.err)")
        #expect(!result.err.contains("Missing value"))
    }

    @Test("--raw prints nothing on standard output unless the key is ready: locked is 77, pending is 75, each with a sentence on standard error")
    func rawOnlyWhenReady() async throws {
        let circle = try await Circle()
        defer { circle.remove() }
        let a = try await circle.device()
        let b = try await circle.device()
        _ = try await a.request("POST", "/v1/accounts", json: ["user": "raw", "passphrase": "pa"])
        _ = try await a.request("POST", "/v1/accounts/raw/lock")
        let locked = try await run(Self.cli, ["key", "get", "-a", "raw", "--raw", "hex", "--socket", a.socket])
        #expect(locked.status == 77)
        #expect(locked.out.isEmpty, "a locked key printed: \(locked.out)")
        #expect(locked.err.contains("locked"))
        #expect(locked.err.contains("keyvault unlock --account raw"), "\(locked.err)")

        _ = try await b.request("POST", "/v1/accounts/raw/enroll", json: ["passphrase": "pb", "deviceName": "b"])
        let pending = try await run(Self.cli, ["key", "get", "-a", "raw", "--raw", "base64", "--socket", b.socket])
        #expect(pending.status == 75)
        #expect(pending.out.isEmpty, "a pending key printed: \(pending.out)")
        #expect(pending.err.contains("pending: awaiting-approval"))

        _ = try await a.request("POST", "/v1/accounts/raw/unlock", json: ["passphrase": "pa"])
        let ready = try await run(Self.cli, ["key", "get", "-a", "raw", "--raw", "hex", "--socket", a.socket])
        #expect(ready.status == 0)
        #expect(ready.out.trimmingCharacters(in: .whitespacesAndNewlines).count == 64)
    }

    @Test("delete takes -a like the other commands, asks for --yes, and deletes")
    func delete() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        try await daemon.start()
        _ = try await daemon.request("POST", "/v1/accounts", json: ["user": "alice.01", "passphrase": "pw"])
        let unsure = try await run(Self.cli, ["delete", "-a", "alice.01", "--socket", daemon.socket])
        #expect(unsure.status == 64)
        #expect(unsure.err.contains("say --yes"))
        #expect(try await daemon.request("GET", "/v1/accounts/alice.01/keys/current").state == "ready")
        let deleted = try await run(Self.cli, ["delete", "-a", "alice.01", "--yes", "--socket", daemon.socket])
        #expect(deleted.status == 0, "\(deleted.err)")
        #expect(try await daemon.request("GET", "/v1/accounts/alice.01/keys/current").state == "unknown")
    }

    @Test("health, server, metrics and events have subcommands")
    func everyEndpoint() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        try await daemon.start()
        _ = try await daemon.request("POST", "/v1/accounts", json: ["user": "ev", "passphrase": "pw"])
        let health = try await run(Self.cli, ["health", "--socket", daemon.socket])
        #expect(health.status == 0)
        #expect(health.out.contains("\"version\""))
        let server = try await run(Self.cli, ["server", "--socket", daemon.socket])
        #expect(server.status == 0)
        #expect(server.out.contains("\"maxConnections\""))
        let metrics = try await run(Self.cli, ["metrics", "--socket", daemon.socket])
        #expect(metrics.status == 0, "\(metrics.err)")
        #expect(metrics.out.contains("keyvault_daemon_"), "\(metrics.out.prefix(300))")
        #expect(!metrics.out.contains("\"state\""))

        let out = daemon.root + "/events.out"
        let events = try ChildProcess(Self.cli, ["events", "-a", "ev", "--count", "1", "--socket", daemon.socket], stdoutPath: out, stderrPath: daemon.root + "/events.err")
        defer { events.killAndReap() }
        // Lock until the stream (which may not have subscribed yet) has seen one event.
        try await eventually {
            _ = try await daemon.request("POST", "/v1/accounts/ev/lock")
            return events.poll() != nil
        }
        #expect(await events.wait() == 0)
        let line = try #require(try JSONSerialization.jsonObject(with: Data(String(contentsOfFile: out, encoding: .utf8).utf8)) as? [String: Any])
        #expect(line["event"] as? String == "locked")
        #expect((line["id"] as? String)?.contains("-") == true)

        // A rotation's event prints its generation as the wire has it: a number, not text.
        let rotatedOut = daemon.root + "/rotated.out"
        _ = try await daemon.request("POST", "/v1/accounts/ev/unlock", json: ["passphrase": "pw"])
        let rotations = try ChildProcess(Self.cli, ["events", "-a", "ev", "--count", "1", "--socket", daemon.socket],
                                         stdoutPath: rotatedOut, stderrPath: daemon.root + "/rotated.err")
        defer { rotations.killAndReap() }
        try await eventually {
            _ = try await daemon.request("POST", "/v1/accounts/ev/rotate", json: ["promote": "now"])
            return rotations.poll() != nil
        }
        let text = try String(contentsOfFile: rotatedOut, encoding: .utf8)
        let event = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let fields = try #require(event["fields"] as? [String: Any], "\(text)")
        #expect(text.contains(#""generation":"#) && !text.contains(#""generation":""#), "\(text)")
        #expect(fields["generation"] as? Int != nil, "\(text)")
        #expect(fields["keyId"] as? String != nil, "\(text)")
    }

    @Test("a locked account: exit 77, and the sentence says to run keyvault unlock")
    func lockedHasItsOwnStatus() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        try await daemon.start()
        _ = try await daemon.request("POST", "/v1/accounts", json: ["user": "shut", "passphrase": "pw"])
        _ = try await daemon.request("POST", "/v1/accounts/shut/lock")
        for command in [["key", "get"], ["rotate"], ["drill", "rotate"]] {
            let said = try await run(Self.cli, command + ["-a", "shut", "--socket", daemon.socket])
            #expect(said.status == 77, "\(command): \(said.err)")
            #expect(said.err.contains("keyvault: locked: "), "\(said.err)")
            #expect(said.err.contains("run: keyvault unlock --account shut"), "\(said.err)")
        }
        // Not every refusal is locked: an unknown account is still 1.
        #expect(try await run(Self.cli, ["key", "get", "-a", "nobody", "--socket", daemon.socket]).status == 1)
    }

    @Test("a drill says which generation and key it made and announced")
    func drillNamesItsGeneration() async throws {
        let circle = try await Circle()
        defer { circle.remove() }
        let a = try await circle.device()
        _ = try await a.request("POST", "/v1/accounts", json: ["user": "named", "passphrase": "pa"])
        _ = try await a.request("GET", "/v1/accounts/named/keys/current?wait=10")
        let drill = try await run(Self.cli, ["drill", "rotate", "-a", "named", "--deadline", "20s", "--socket", a.socket])
        #expect(drill.status == 0, "\(drill.err)")
        let current = try await a.request("GET", "/v1/accounts/named/keys/2?wait=10")
        let keyID = try #require(current["keyId"], "\(current.raw.text)")
        #expect(drill.out.contains("generation 2, key ID \(keyID)"), "\(drill.out)")
    }

    @Test("a drill with a device down, its standard error not a terminal, prints no progress lines")
    func drillProgressOnlyOnATerminal() async throws {
        let circle = try await Circle()
        defer { circle.remove() }
        let a = try await circle.device()
        let b = try await circle.device()
        _ = try await a.request("POST", "/v1/accounts", json: ["user": "drill", "passphrase": "pa"])
        #expect(try await HalfDoneTests.enrollAndApprove(b, a, "drill"))
        await b.stop()
        let drill = try await run(Self.cli, ["drill", "rotate", "-a", "drill", "--deadline", "2s", "--socket", a.socket])
        #expect(drill.status == 1)
        let lines = drill.err.split(separator: "\n")
        #expect(lines.count == 1, "standard error: \(lines.count) lines: \(drill.err.prefix(500))")
        #expect(drill.err.contains("did not acknowledge"))
        #expect(!drill.err.contains("devices  generation"))
    }

    @Test("a one-device account: devices says trusted, enrollments is empty, and rotate makes generation 2 current, kept across a restart")
    func oneDeviceRotates() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        try await daemon.start()
        _ = try await daemon.request("POST", "/v1/accounts", json: ["user": "solo", "passphrase": "pw"])
        let devices = try await run(Self.cli, ["devices", "-a", "solo", "--socket", daemon.socket])
        #expect(devices.status == 0)
        #expect(devices.out.contains("\"trusted\""))
        let enrollments = try await run(Self.cli, ["enrollments", "-a", "solo", "--socket", daemon.socket])
        #expect(enrollments.status == 0, "\(enrollments.err)")
        #expect(enrollments.out.contains("\"enrollments\""))
        let first = try #require(try await daemon.request("GET", "/v1/accounts/solo/keys/current")["key"])

        let rotate = try await run(Self.cli, ["rotate", "-a", "solo", "--socket", daemon.socket])
        #expect(rotate.status == 0, "\(rotate.err)")
        let current = try await daemon.request("GET", "/v1/accounts/solo/keys/current")
        #expect(current.object["generation"] as? Int == 2)
        #expect(current["key"] != first)
        #expect(try await daemon.request("GET", "/v1/accounts/solo/keys/1")["key"] == first)

        await daemon.stop()
        try await daemon.start()
        _ = try await daemon.request("POST", "/v1/accounts/solo/unlock", json: ["passphrase": "pw"])
        let after = try await daemon.request("GET", "/v1/accounts/solo/keys/current")
        #expect(after.object["generation"] as? Int == 2)
        #expect(after["key"] == current["key"])
    }
}
