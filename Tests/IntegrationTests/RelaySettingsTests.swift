import AsyncHTTPClient
import Foundation
import KeyVaultTestSupport
import NIOCore
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// keyvault-relay's settings from flags, `KEYVAULT_RELAY_*` and systemd credentials
/// (`$CREDENTIALS_DIRECTORY`), and the options that need none of them.
@Suite("keyvault-relay's settings: flags, the environment, systemd credentials")
struct RelaySettingsTests {
    static var relayBinary: String { DaemonProcess.binaryDirectory + "/keyvault-relay" }

    @Test("--version and --help need no settings; without them the relay names what is missing")
    func versionAlone() async throws {
        let version = try await run(Self.relayBinary, ["--version"])
        #expect(version.status == 0, "\(version.err)")
        #expect(version.out.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ".").count == 3, "\(version.out)")
        let help = try await run(Self.relayBinary, ["--help"])
        #expect(help.status == 0, "\(help.err)")
        #expect(help.out.contains("KEYVAULT_RELAY_") && help.out.contains("CREDENTIALS_DIRECTORY"), "\(help.out)")
        let bare = try await run(Self.relayBinary, [])
        #expect(bare.status == 64)
        #expect(bare.err.contains("missing --store: give it, or KEYVAULT_RELAY_STORE, or the credential 'store'"), "\(bare.err)")
        let level = try await run(Self.relayBinary, ["--log-level", "verbose"])
        #expect(level.status == 64)
        #expect(level.err.contains("--log-level takes one of trace, debug, info, notice, warning, error, critical, not 'verbose'"), "\(level.err)")
    }

    @Test("from the environment, a flag winning over its variable; --log-format json from it too")
    func fromEnvironment() async throws {
        let root = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let issuer = try await TestIssuer.make(in: root)
        let relay = try await Self.start(["--listen", "127.0.0.1:0"], environment: [
            "KEYVAULT_RELAY_STORE": "sqlite:" + root + "/relay.sqlite",
            "KEYVAULT_RELAY_LISTEN": "not an address",  // the flag wins
            "KEYVAULT_RELAY_PLAIN_HTTP": "true",
            "KEYVAULT_RELAY_IDENTITY_ISSUER": TestIssuer.issuer,
            "KEYVAULT_RELAY_IDENTITY_AUDIENCE": TestIssuer.audience,
            "KEYVAULT_RELAY_IDENTITY_JWKS": issuer.jwksPath,
            "KEYVAULT_RELAY_LOG_FORMAT": "json",
        ], root: root)
        defer { relay.remove() }
        #expect(try await relay.send("GET", "/v1/health", as: nil).text == #"{"state":"ready"}"#)
        // The issuer, audience and key set took: a real token files a candidate.
        let device = TestDevice()
        let filed = try await relay.candidacy("envy", device, token: try await issuer.token(for: "envy", device: device))
        #expect(filed.status == 200, "\(filed.text)")
        #expect(await relay.stop() == 0)
        let logs = try DaemonOptionsTests.jsonLines(try String(contentsOfFile: relay.logPath, encoding: .utf8))
        #expect(logs.contains { $0["message"] == "candidate filed" && $0["account"] == "envy" }, "\(logs)")
        // The access lines carry their status and duration as numbers (checked by `jsonLines`).
        #expect(logs.contains { $0["message"] == "request" && $0["status"] == "200" && $0["seconds"] != nil }, "\(logs)")

        // Without the flag, the variable's bad address is the one in force: refused by its name, as a usage error.
        let refused = try await run(Self.relayBinary, [], environment: [
            "KEYVAULT_RELAY_STORE": "sqlite:" + root + "/relay.sqlite", "KEYVAULT_RELAY_LISTEN": "not an address",
        ])
        #expect(refused.status == 64)
        #expect(refused.err.contains("KEYVAULT_RELAY_LISTEN takes HOST:PORT"), "\(refused.err)")
    }

    @Test("from $CREDENTIALS_DIRECTORY with no flag at all: values read whole, files as themselves; the environment wins over a credential")
    func fromCredentials() async throws {
        let root = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let issuer = try await TestIssuer.make(in: root)
        let credentials = root + "/credentials"
        try FileManager.default.createDirectory(atPath: credentials, withIntermediateDirectories: true)
        let files = [
            "store": "sqlite:\(root)/relay.sqlite\n", "listen": "not an address\n", "plain-http": "true\n",
            "identity-issuer": TestIssuer.issuer + "\n", "identity-audience": TestIssuer.audience,
        ]
        for (name, content) in files { try content.write(toFile: credentials + "/" + name, atomically: true, encoding: .utf8) }
        // A credential for a file option is the file: here the key set itself.
        try FileManager.default.copyItem(atPath: issuer.jwksPath, toPath: credentials + "/identity-jwks")
        let relay = try await Self.start([], environment: ["CREDENTIALS_DIRECTORY": credentials, "KEYVAULT_RELAY_LISTEN": "127.0.0.1:0"], root: root)
        defer { relay.remove() }
        #expect(try await relay.send("GET", "/v1/health", as: nil).text == #"{"state":"ready"}"#)
        let device = TestDevice()
        #expect(try await relay.candidacy("cred", device, token: try await issuer.token(for: "cred", device: device)).status == 200)
        #expect(await relay.stop() == 0)

        // Without the variable, the credential's bad address is refused by the credential's name.
        let refused = try await run(Self.relayBinary, [], environment: ["CREDENTIALS_DIRECTORY": credentials])
        #expect(refused.status == 64)
        #expect(refused.err.contains("the credential \(credentials)/listen takes HOST:PORT"), "\(refused.err)")
    }

    @Test("the TLS certificate and key as credentials, as the shipped unit loads them: health over HTTPS")
    func tlsFromCredentials() async throws {
        let root = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let issuer = try await TestIssuer.make(in: root)
        let (_, certificate, key) = try await RelayServiceTLSTests.makeCertificates(in: root)
        let credentials = root + "/credentials"
        try FileManager.default.createDirectory(atPath: credentials, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: certificate, toPath: credentials + "/tls-cert")
        try FileManager.default.copyItem(atPath: key, toPath: credentials + "/tls-key")
        let relay = try await Self.start(["--store", "sqlite:" + root + "/relay.sqlite", "--listen", "127.0.0.1:0"] + issuer.relayArguments,
                                         environment: ["CREDENTIALS_DIRECTORY": credentials], root: root)
        defer { relay.remove() }
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(certificateVerification: .none))
        let answered: Result<String, any Error>
        do {
            let response = try await client.execute(HTTPClientRequest(url: "https://127.0.0.1:\(relay.port)/v1/health"), timeout: .seconds(10))
            answered = .success(String(buffer: try await response.body.collect(upTo: 1024)))
        } catch {
            answered = .failure(error)
        }
        try await client.shutdown()
        #expect(try answered.get() == #"{"state":"ready"}"#)
        #expect(await relay.stop() == 0)
    }

    @Test("a credential that cannot be read is named, and no error shows the store's password")
    func credentialErrors() async throws {
        let root = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let credentials = root + "/credentials"
        try FileManager.default.createDirectory(atPath: credentials + "/store", withIntermediateDirectories: true)
        let unreadable = try await run(Self.relayBinary, [], environment: ["CREDENTIALS_DIRECTORY": credentials])
        #expect(unreadable.status == 64)
        #expect(unreadable.err.contains("the credential \(credentials)/store is not a file"), "\(unreadable.err)")

        try FileManager.default.removeItem(atPath: credentials + "/store")
        try "postgress://keyvault:hunter2@127.0.0.1:5432/kv\n".write(toFile: credentials + "/store", atomically: true, encoding: .utf8)
        let issuer = try await TestIssuer.make(in: root)
        let misspelt = try await run(Self.relayBinary, ["--listen", "127.0.0.1:0", "--plain-http"] + issuer.relayArguments,
                                     environment: ["CREDENTIALS_DIRECTORY": credentials])
        #expect(misspelt.status != 0)
        #expect(misspelt.err.contains("unknown relay scheme postgress://"), "\(misspelt.err)")
        #expect(!(misspelt.out + misspelt.err).contains("hunter2"), "\(misspelt.err)")

        // With --log-format json the reason is a log object too, and still without the password.
        let asJSON = try await run(Self.relayBinary, ["--listen", "127.0.0.1:0", "--plain-http", "--log-format", "json"] + issuer.relayArguments,
                                   environment: ["CREDENTIALS_DIRECTORY": credentials])
        #expect(asJSON.status == 1)
        let said = try DaemonOptionsTests.jsonLines(asJSON.err)
        #expect(said.contains { $0["level"] == "critical" && $0["problem"]?.contains("unknown relay scheme postgress://") == true }, "\(asJSON.err)")
        #expect(!asJSON.err.contains("hunter2"))
    }

    static func folder() throws -> String {
        var template = Array("/tmp/kvsettings-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw TestFailure("mkdtemp failed") }
        return String(cString: made)
    }

    /// keyvault-relay with these arguments and environment, once it prints where it listens.
    static func start(_ arguments: [String], environment: [String: String], root: String) async throws -> RelayServiceProcess {
        let out = root + "/relay.out", log = root + "/relay.log"
        let process = try ChildProcess(relayBinary, arguments, environment: environment, stdoutPath: out, stderrPath: log)
        for _ in 0..<1200 where process.isRunning {
            let text = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
            if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("listening on ") }),
               let port = line.split(separator: ":").last.flatMap({ Int($0) }) {
                return RelayServiceProcess(attaching: process, port: port, logPath: log)
            }
            try await Task.sleep(for: .milliseconds(25))
        }
        process.killAndReap()
        throw TestFailure("keyvault-relay did not start: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
    }
}

extension RelaySettingsTests {
    @Test("the systemd unit's credentials and variables each name an option of keyvault-relay")
    func unitNamesOptions() async throws {
        let unit = try String(contentsOfFile: SystemdUnitTests.repository + "/dist/keyvault-relay.service", encoding: .utf8)
        let help = try await run(Self.relayBinary, ["--help"]).out
        let credentials = unit.split(separator: "\n").filter { $0.hasPrefix("LoadCredential=") }
            .map { $0.dropFirst("LoadCredential=".count).split(separator: ":")[0] }
        // The store's URL holds its password; the TLS files are named by path, so a reload reads renewed ones.
        #expect(credentials.sorted() == ["store"])
        let variables = unit.split(whereSeparator: { !($0.isLetter || $0 == "_") }).filter { $0.hasPrefix("KEYVAULT_RELAY_") && $0.count > 15 }
        #expect(variables.count >= 5)
        for option in credentials.map(String.init) + variables.map({ $0.dropFirst(15).lowercased().replacingOccurrences(of: "_", with: "-") }) {
            #expect(help.contains("--" + option + " "), "the unit names \(option), which keyvault-relay does not take")
        }
    }
}
