import ArgumentParser
import KeyVault
import Logging
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultStore

@main
struct Keyvaultd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keyvaultd",
        abstract: "The keyvaultd daemon: an account's 32-byte keys, wrapped at rest, served over a Unix socket.",
        version: KeyVaultVersion.string)

    @Option(name: .customLong("data-dir"), help: "The vault's folder (made 0700). Default: $XDG_DATA_HOME/keyvaultd.")
    var dataDirectory: String?

    @Option(help: "The Unix socket to serve on. Default: $XDG_RUNTIME_DIR/keyvaultd.sock.")
    var socket: String?

    @Option(help: "A policy folder of *.toml files. Default: the built-in policy, the same as the shipped policy/.")
    var policy: String?

    @Option(help: "The relay shared with the account's other devices: sqlite:PATH (or a path). Without it, this device is on its own.")
    var relay: String?

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: String = "info"

    func run() async throws {
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "keyvaultd")
        let configuration = DaemonConfiguration(
            dataDirectory: dataDirectory ?? DefaultPaths.dataDirectory,
            socketPath: socket ?? SocketPath.defaultPath,
            policyDirectory: policy,
            relay: relay)
        do {
            try await KeyVaultDaemon.run(configuration, logger: logger)
        } catch let error as PolicyError {
            logger.critical("the policy does not load", metadata: ["problem": "\(error)"])
            StandardError.print("keyvaultd: policy error: \(error)")
            throw ExitCode(78)  // EX_CONFIG
        } catch {
            logger.critical("keyvaultd cannot run", metadata: ["problem": "\(error)"])
            StandardError.print("keyvaultd: \(error)")
            throw ExitCode(1)
        }
    }
}
