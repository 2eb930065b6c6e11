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

@Suite("The keyvault CLI against a real daemon")
struct CLITests {
    /// A new user's walk found `key get --generation N --wait S` answering `unknown` at once for a
    /// generation not announced here yet, which the read route waits for (API.md): the CLI asked
    /// without a wait first and waited only on `pending`. It waits on a generation or key ID not
    /// heard of yet too, and an account this device does not hold is still answered at once.
    @Test("key get --wait waits for a generation not announced here yet, and answers once it lands; an unknown account at once")
    func waitsForAGenerationNotAnnouncedYet() async throws {
        let cli = DaemonProcess.binaryDirectory + "/keyvault"
        let circle = try await Circle()
        defer { circle.remove() }
        let a = try await circle.device()
        let b = try await circle.device()
        #expect(try await a.request("POST", "/v1/accounts", json: ["user": "later", "passphrase": "pa"]).status == 200)
        try await circle.enroll(b, into: "later", approver: a, name: "b")
        let waiting = Task { try await run(cli, ["key", "get", "-a", "later", "--generation", "2", "--wait", "60", "--raw", "hex", "--socket", b.socket]) }
        try await b.waitUntilHolding(reads: 1)
        #expect(try await a.request("POST", "/v1/accounts/later/rotate", json: ["promote": "now"]).status == 200)
        let got = try await waiting.value
        #expect(got.status == 0 && got.out.trimmingCharacters(in: .whitespacesAndNewlines).count == 64, "\(got)")

        let started = ContinuousClock.now
        let nobody = try await run(cli, ["key", "get", "-a", "nobody", "--generation", "2", "--wait", "60", "--socket", b.socket])
        #expect(nobody.status != 0 && ContinuousClock.now - started < .seconds(20), "\(nobody) after \(ContinuousClock.now - started)")
    }

    /// What a caller hands the CLI is bounded where it enters: standard input past 16 MiB is refused
    /// (`seal < /dev/zero` grew until the memory ran out), and a duration past 31 years is a usage
    /// error (`--deadline 1e16s` trapped turning it into milliseconds).
    @Test("standard input past 16 MiB and durations past 31 years are refused, not a crash")
    func boundedInput() async throws {
        let cli = DaemonProcess.binaryDirectory + "/keyvault"
        let sealed = try await run("/bin/sh", ["-c", "head -c 17000000 /dev/zero | \"$0\" seal -a acct --socket /nonexistent/kv.sock", cli])
        #expect(sealed.status == 1 && sealed.err.contains("standard input holds more than 16 MiB; nothing was sealed"), "\(sealed)")
        let drill = try await run(cli, ["drill", "rotate", "--socket", "/nonexistent/kv.sock", "-a", "acct", "--deadline", "1e16s"])
        #expect(drill.status == 64 && drill.err.contains("(at most 31 years)"), "\(drill)")
        let daemon = DaemonProcess.binaryDirectory + "/keyvaultd"
        let calibrate = try await run(daemon, ["--calibrate-kdf", "1e20s", "--calibrate-memory-mib", "8"])
        #expect(calibrate.status == 64 && calibrate.err.contains("(at most 31 years)"), "\(calibrate)")
    }

    /// The KDF is calibrated by the daemon's executable, which runs it; the CLI's start loads no
    /// crypto library (its codecs are Foundation's base64 and a branch-free hex, checked against
    /// libsodium's in `cliRoundTrip`).
    @Test("keyvaultd --calibrate-kdf proposes a [kdf] policy and serves nothing; the CLI links neither libsodium nor OpenSSL")
    func calibrationInTheDaemonsExecutable() async throws {
        let calibrated = try await run(DaemonProcess.binaryDirectory + "/keyvaultd", ["--calibrate-kdf", "20ms", "--calibrate-memory-mib", "8"])
        #expect(calibrated.status == 0, "\(calibrated)")
        #expect(calibrated.out.contains("[kdf]\npasses = ") && calibrated.out.contains("memory_mib = 8"), "\(calibrated.out)")
        let needed = try await run("/usr/bin/readelf", ["--dynamic", DaemonProcess.binaryDirectory + "/keyvault"])
        #expect(needed.status == 0, "\(needed.err)")
        #expect(needed.out.contains("(NEEDED)"), "\(needed.out)")
        #expect(!needed.out.contains("libsodium") && !needed.out.contains("libcrypto"), "\(needed.out)")
        // A script that still calls the old command is told where it went.
        let moved = try await run(DaemonProcess.binaryDirectory + "/keyvault", ["kdf", "calibrate", "--target", "500ms"])
        #expect(moved.status == 64 && moved.err.contains("keyvaultd --calibrate-kdf"), "\(moved)")
        let alone = try await run(DaemonProcess.binaryDirectory + "/keyvaultd", ["--calibrate-memory-mib", "64"])
        #expect(alone.status == 64 && alone.err.contains("goes with --calibrate-kdf"), "\(alone)")
    }

    @Test("account create, key get (JSON, --raw hex, --raw base64), lock, unlock, passwd, status")
    func cliRoundTrip() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        try await daemon.start()
        let cli = DaemonProcess.binaryDirectory + "/keyvault"
        let env = ["KEYVAULT_SOCKET": daemon.socket]

        let created = try await run(cli, ["account", "create", "--account", "cli"], stdin: "cli passphrase\n", environment: env)
        #expect(created.status == 0, "\(created.err)")
        let json = try await run(cli, ["key", "get", "--account", "cli"], environment: env)
        #expect(json.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any])
        let key = try #require(object["key"] as? String)
        let base64 = try await run(cli, ["key", "get", "--account", "cli", "--raw", "base64"], environment: env)
        #expect(base64.out.trimmingCharacters(in: .whitespacesAndNewlines) == key)
        let hex = try await run(cli, ["key", "get", "--account", "cli", "--raw", "hex"], environment: env)
        #expect(hex.out.trimmingCharacters(in: .whitespacesAndNewlines) == Hex.encode(Base64.decode(key)!))

        #expect(try await run(cli, ["lock", "--account", "cli"], environment: env).status == 0)
        let locked = try await run(cli, ["key", "get", "--account", "cli", "--socket", daemon.socket])
        #expect(locked.status == 77)
        #expect(locked.err.contains("locked"))

        let file = daemon.root + "/pass.txt"
        try "cli passphrase\n".write(toFile: file, atomically: true, encoding: .utf8)
        #expect(try await run(cli, ["unlock", "--account", "cli", "--passphrase-file", file], environment: env).status == 0)
        let passwd = try await run(cli, ["passwd", "--account", "cli"], stdin: "cli passphrase\nnew cli passphrase\n", environment: env)
        #expect(passwd.status == 0, "\(passwd.err)")
        #expect(try await run(cli, ["lock", "--account", "cli"], environment: env).status == 0)
        #expect(try await run(cli, ["unlock", "--account", "cli"], stdin: "new cli passphrase\n", environment: env).status == 0)
        #expect(try await run(cli, ["key", "get", "--account", "cli", "--raw", "base64"], environment: env).out.contains(key))

        // Global options before the subcommand, as in git: no environment, the socket named first.
        let global = try await run(cli, ["--socket", daemon.socket, "key", "get", "--account", "cli", "--raw", "base64"])
        #expect(global.status == 0, "\(global.err)")
        #expect(global.out.contains(key))
        #expect(try await run(cli, ["--socket=\(daemon.socket)", "status"]).status == 0)
        let missing = try await run(cli, ["--socket"])
        #expect(missing.status != 0)
        #expect(missing.err.contains("--socket takes a path"))

        let status = try await run(cli, ["status"], environment: env)
        #expect(status.status == 0)
        #expect(status.out.contains("\"cli\""))
        // A bad account ID never reaches the daemon.
        let bad = try await run(cli, ["key", "get", "--account", "../x"], environment: env)
        #expect(bad.status != 0)
        #expect(bad.err.contains("account ID"))
    }
}
