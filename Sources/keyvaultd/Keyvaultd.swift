import ArgumentParser
import KeyVault
import KeyVaultPolicy
import Logging
import KeyVaultCrypto
import KeyVaultUnixSocket
import KeyVaultProtocol
import KeyVaultLogging

@main
struct Keyvaultd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keyvaultd",
        abstract: "The keyvaultd daemon: an account's 32-byte keys, wrapped at rest, served over a Unix socket.",
        version: KeyVaultVersion.string)

    @Option(name: .customLong("data-dir"),
            help: "The vault's folder (made 0700). Default: $XDG_DATA_HOME/keyvaultd (or ~/.local/share/keyvaultd), its missing parents made 0700.")
    var dataDirectory: String?

    @Option(help: "The Unix socket to serve on. Default: $XDG_RUNTIME_DIR/keyvaultd.sock, else ~/.local/state/keyvaultd/keyvaultd.sock.")
    var socket: String?

    @Option(help: "A policy folder of *.toml files. Default: the built-in policy, the same as the shipped policy/.")
    var policy: String?

    @Option(help: "The relay shared with the account's other devices: sqlite:PATH (or a path) on one host, or a relay service https://HOST:PORT (repeat it to fail over between instances). Without it, this device is on its own.")
    var relay: [String] = []

    @Option(name: .customLong("relay-ca"), help: "A PEM certificate authority to trust for the relay service (a private CA).")
    var relayCA: String?

    @Option(name: .customLong("max-connections"), help: "Connections served at once (1 to 100000); past it an idle one is closed to make room, or the new one refused.")
    var maxConnections: Int = 1024

    @Option(name: .customLong("request-timeout"), help: "Seconds (1 to 3600) a request has to arrive whole, head and body, from its first byte; then the connection is closed.")
    var requestTimeout: Int = 10

    @Option(name: .customLong("log-level"), help: "The lowest level written: trace, debug, info, notice, warning, error or critical.")
    var logLevel: String = "info"

    @Option(name: .customLong("log-format"), help: "text (key=value) or json (one object per line) on standard error.")
    var logFormat: String = "text"

    @Option(name: .customLong("calibrate-kdf"), help: "Serve nothing: measure Argon2id here and print a [kdf] policy whose unlock takes about this long (500ms, 1s, 1.5s).")
    var calibrateKDF: String?

    @Option(name: .customLong("calibrate-memory-mib"), help: "With --calibrate-kdf: the memory to start from, in MiB (8 to 65536, default 256; halved while one pass is too slow).")
    var calibrateMemoryMiB: Int?

    /// The checked log options (validate() has refused any other).
    private var logSettings: LogSettings {
        (try? LogSettings(level: logLevel, format: logFormat)) ?? LogSettings()
    }

    func validate() throws {
        guard (1...100_000).contains(maxConnections) else { throw ValidationError("--max-connections must be from 1 to 100000") }
        guard (1...3600).contains(requestTimeout) else { throw ValidationError("--request-timeout must be from 1 to 3600 seconds") }
        if let target = calibrateKDF, !((DurationText.seconds(target) ?? 0) > 0) {
            throw ValidationError("--calibrate-kdf takes a duration such as 500ms, 1s or 1.5s (at most 31 years)")
        }
        if let memory = calibrateMemoryMiB {
            guard calibrateKDF != nil else { throw ValidationError("--calibrate-memory-mib goes with --calibrate-kdf") }
            guard (8...65536).contains(memory) else { throw ValidationError("--calibrate-memory-mib must be between 8 and 65536") }
        }
        do {
            _ = try LogSettings(level: logLevel, format: logFormat)
        } catch {
            throw ValidationError(error.description)
        }
    }

    func run() async throws {
        if let target = calibrateKDF, let seconds = DurationText.seconds(target) {
            return try KDFCalibrationReport.run(targetSeconds: seconds, target: target, memoryMiB: calibrateMemoryMiB ?? 256)
        }
        let logs = logSettings
        logs.bootstrap()
        let logger = Logger(label: "keyvaultd")
        // In json every line of standard error is a log object: the sentence is the log line's alone.
        let alsoAsSentence = logs.format == .text
        do {
            var configuration = DaemonConfiguration(
                dataDirectory: try dataDirectory ?? DefaultPaths.madeDataDirectoryParents(),
                socketPath: socket ?? DaemonSocket.defaultPath,
                policyDirectory: policy)
            configuration.relays = relay
            configuration.relayCertificateAuthority = relayCA
            configuration.maxConnections = maxConnections
            configuration.requestTimeout = .seconds(requestTimeout)
            try await KeyVaultDaemon.run(configuration, logger: logger)
        } catch let error as PolicyError {
            logger.critical("the policy does not load", metadata: ["problem": "\(error)"])
            if alsoAsSentence { StandardError.print("keyvaultd: policy error: \(error)") }
            throw ExitCode(78)  // EX_CONFIG
        } catch {
            logger.critical("keyvaultd cannot run", metadata: ["problem": "\(error)"])
            if alsoAsSentence { StandardError.print("keyvaultd: \(error)") }
            throw ExitCode(1)
        }
    }
}
