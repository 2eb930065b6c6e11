import ArgumentParser
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import KeyVaultClient
import KeyVaultUnixSocket
import KeyVaultIDs

@main
struct Keyvault: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keyvault",
        abstract: "Talk to keyvaultd over its Unix socket.",
        discussion: """
            Answers print as JSON on standard output; the daemon's sentence for anything but `ready` \
            goes to standard error.
            Exit status: 0 ready; 75 pending (the key is not here yet: wait and ask again); \
            77 locked (run keyvault unlock, then ask again); \
            2 the daemon cannot be reached (not running, or the wrong socket); 64 a usage error; \
            1 anything else (unknown, revoked, forbidden, a refused peer…).
            Passphrases are read without echo from the terminal, or from --passphrase-file, \
            or from standard input; never from the command line.
            --socket PATH may come before the subcommand (keyvault --socket PATH key get …) or after it.
            Before anything is sent, the socket's peer must be this user's own uid: another user who \
            took the socket's place never hears a passphrase. A daemon that runs as another user is \
            named with --daemon-uid UID (before the subcommand) or $KEYVAULT_DAEMON_UID.
            """,
        version: KeyVaultVersion.string,
        subcommands: [Status.self, Health.self, Server.self, Metrics.self, AccountCommand.self, Delete.self, Unlock.self, Lock.self, Passwd.self, KeyCommand.self, Events.self,
                      Seal.self, Open.self,
                      Enroll.self, Enrollments.self, Approve.self, Devices.self, Rotate.self, Revoke.self, Drill.self, Export.self, Import.self, MovedKDFCommand.self])

    /// Global options before the subcommand are taken first (`GlobalOptions`).
    static func main() async {
        let arguments: [String]
        do {
            arguments = try GlobalOptions.extract(Array(CommandLine.arguments.dropFirst())) { setenv($0, $1, 1) }
        } catch {
            exit(withError: ValidationError("\(error)"))
        }
        do {
            var command = try parseAsRoot(arguments)
            if var async = command as? any AsyncParsableCommand {
                try await async.run()
            } else {
                try command.run()
            }
        } catch let error as UsageError {
            StandardError.print("keyvault: \(error.message)")
            Glibc.exit(error.status)
        } catch {
            exit(withError: error)
        }
    }
}

/// A problem found while running (a file that cannot be read, two passphrases that
/// differ): the sentence alone, not the usage of every command, and 64.
struct UsageError: Error {
    var message: String
    var status: Int32 = CLIExit.usage

    init(_ message: String) { self.message = message }

    /// Not the caller's mistake: 1.
    static func other(_ message: String) -> UsageError {
        var error = UsageError(message)
        error.status = CLIExit.other
        return error
    }
}

/// `--socket`, shared by every subcommand that talks to the daemon.
struct SocketOptions: ParsableArguments {
    @Option(help: "The daemon's socket. Default: $KEYVAULT_SOCKET, else $XDG_RUNTIME_DIR/keyvaultd.sock, else ~/.local/state/keyvaultd/keyvaultd.sock.")
    var socket: String?

    var path: String {
        socket ?? ProcessInfo.processInfo.environment["KEYVAULT_SOCKET"].flatMap { $0.isEmpty ? nil : $0 } ?? DaemonSocket.defaultPath
    }
}

/// `--device-id`, checked before anything is sent (approve, dismiss, revoke).
struct DeviceIDOption: ParsableArguments {
    @Option(name: .customLong("device-id"), help: "The device's ID: 32 hex characters (from `keyvault devices` or `keyvault enrollments`).",
            transform: ParsedID.parse)
    var deviceID: DeviceIdentifier
}

/// With a relay service, the person's sign-in: an ID token read from a file (never from the command line).
struct IdentityTokenOption: ParsableArguments {
    @Option(name: .customLong("identity-token-file"),
            help: "A file holding the OpenID Connect ID token of the sign-in (its nonce: `keyvault account identity-nonce`); needed with a relay service.")
    var identityTokenFile: String?

    /// Without a token, a relay service's refusal names the API's field: said here with this option.
    func explain(_ answer: CLIAnswer, account: String, doing what: String) -> CLIAnswer {
        guard identityTokenFile == nil, answer.state == "denied", answer.field("error")?.contains("identityToken") == true else { return answer }
        return answer.saying("this daemon's relay is a relay service, so \(what) needs the person's sign-in: "
            + "sign in with the nonce `keyvault account identity-nonce --account \(account)` prints, "
            + "and give the ID token with --identity-token-file FILE")
    }

    func read() throws -> String? {
        guard let path = identityTokenFile else { return nil }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw UsageError("cannot read --identity-token-file \(path)")
        }
        let token = text.trimmedOfWhitespace
        guard !token.isEmpty else { throw UsageError("--identity-token-file \(path) is empty") }
        return token
    }
}

struct AccountOption: ParsableArguments {
    @Option(name: [.short, .long], help: "The account (user ID).")
    var account: String

    /// An invalid ID is a usage error (64), said with the daemon's own words
    /// before anything is sent, under the subcommand's own usage.
    func validate() throws {
        do throws(InvalidInput) {
            _ = try AccountID(validating: account)
        } catch {
            throw ValidationError(error.message)
        }
    }

    /// Percent-encoding is not needed: a valid ID is already URL-safe.
    func validated() throws -> String {
        try validate()
        return account
    }
}

struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "status", abstract: "The daemon's status and its accounts.")
    @OptionGroup var socket: SocketOptions

    func run() async throws {
        try await CLIRequest(socket: socket.path).send("GET", "/v1/status").finish()
    }
}

struct AccountCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "account", abstract: "Manage accounts.", subcommands: [Create.self, Found.self, IdentityNonce.self])

    struct IdentityNonce: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "identity-nonce",
            abstract: "Print the nonce the sign-in must carry to create or join this account through a relay service.")
        @OptionGroup var socket: SocketOptions
        @OptionGroup var account: AccountOption

        func run() async throws {
            let id = try account.validated()
            try await CLIRequest(socket: socket.path).send("POST", "/v1/accounts/\(id)/identity-nonce").finish()
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "create", abstract: "Create an account on its first device (genesis).")
        @OptionGroup var socket: SocketOptions
        @OptionGroup var account: AccountOption
        @Option(help: "whenUnlocked (default) or afterFirstUnlock.")
        var accessibility: String?
        @Option(help: "This device's name, as other devices will list it.")
        var deviceName: String?
        @Option(help: "Read the passphrase from this file (first line).")
        var passphraseFile: String?
        @OptionGroup var identity: IdentityTokenOption

        func run() async throws {
            let id = try account.validated()
            let passphrase = try PassphraseInput.read(file: passphraseFile, prompt: "New passphrase for \(id): ", confirm: true)
            var body: [String: String] = ["user": id, "passphrase": passphrase]
            if let token = try identity.read() { body["identityToken"] = token }
            if let accessibility { body["accessibility"] = accessibility }
            if let deviceName { body["deviceName"] = deviceName }
            let answer = try await CLIRequest(socket: socket.path).send("POST", "/v1/accounts", json: body)
            try identity.explain(answer, account: id, doing: "creating an account").finish()
        }
    }
}

struct Unlock: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "unlock", abstract: "Unlock an account with its passphrase.")
    @OptionGroup var socket: SocketOptions
    @OptionGroup var account: AccountOption
    @Option(help: "Read the passphrase from this file (first line).")
    var passphraseFile: String?

    func run() async throws {
        let id = try account.validated()
        let passphrase = try PassphraseInput.read(file: passphraseFile, prompt: "Passphrase for \(id): ", confirm: false)
        try await CLIRequest(socket: socket.path).send("POST", "/v1/accounts/\(id)/unlock", json: ["passphrase": passphrase]).finish()
    }
}

struct Lock: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "lock", abstract: "Lock an account: its KEK leaves memory.")
    @OptionGroup var socket: SocketOptions
    @OptionGroup var account: AccountOption

    func run() async throws {
        let id = try account.validated()
        try await CLIRequest(socket: socket.path).send("POST", "/v1/accounts/\(id)/lock").finish()
    }
}

struct Passwd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "passwd",
        abstract: "Change an account's passphrase.",
        discussion: "Without files, a terminal is asked for both; standard input gives the old passphrase on its first line and the new one on its second.")
    @OptionGroup var socket: SocketOptions
    @OptionGroup var account: AccountOption
    @Option(help: "Read the current passphrase from this file.")
    var passphraseFile: String?
    @Option(help: "Read the new passphrase from this file.")
    var newPassphraseFile: String?

    func run() async throws {
        let id = try account.validated()
        let old = try PassphraseInput.read(file: passphraseFile, prompt: "Current passphrase for \(id): ", confirm: false)
        let new = try PassphraseInput.read(file: newPassphraseFile, prompt: "New passphrase for \(id): ", confirm: true)
        try await CLIRequest(socket: socket.path).send("POST", "/v1/accounts/\(id)/passphrase", json: ["old": old, "new": new]).finish()
    }
}

struct KeyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "key", abstract: "Read keys.", subcommands: [Get.self])

    enum RawEncoding: String, ExpressibleByArgument {
        case hex, base64
    }

    struct Get: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "get", abstract: "Read the current key, or a generation, or a key ID.")
        @OptionGroup var socket: SocketOptions
        @OptionGroup var account: AccountOption
        @Option(help: "A generation number.")
        var generation: Int?
        @Option(name: .customLong("key-id"), help: "A key ID (32 hex characters).", transform: ParsedID.parse)
        var keyID: KeyIdentifier?
        // Unconditional, so that `--wait -5` is refused for its value rather than read as an option.
        @Option(parsing: .unconditional, help: "Seconds (a whole number from 0) to wait for a key that is not here yet.")
        var wait: String = "0"
        @Option(help: "Print only the key, hex or base64, and nothing at all on standard output unless it is ready.")
        var raw: RawEncoding?

        func validate() throws {
            if generation != nil && keyID != nil { throw ValidationError("give --generation or --key-id, not both") }
            guard waitSeconds != nil else { throw ValidationError("--wait takes a whole number of seconds from 0, not '\(wait)'") }
        }

        var waitSeconds: Int? {
            guard !wait.isEmpty, wait.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
            return Int(wait)
        }

        func run() async throws {
            let id = try account.validated()
            var path = "/v1/accounts/\(id)/keys/"
            if let generation {
                path += String(generation)
            } else if let keyID {
                path += "id/\(keyID)"
            } else {
                path += "current"
            }
            let answer = try await KeyWait.read(socket: socket.path, path: path, seconds: waitSeconds ?? 0)
            guard let raw else { return try answer.finish() }
            // A script's `KEY=$(keyvault key get --raw hex)` gets a key or nothing; the exit status says which.
            guard answer.state == "ready" else {
                if answer.state == "pending" { StandardError.print("keyvault: pending: \(answer.field("reason") ?? "the key is not here yet")") }
                return try answer.exitByState()
            }
            // Printed only if it is a key: 32 bytes in base64, whichever encoding is asked for.
            guard let key = answer.field("key"), var bytes = Base64.decode(key), bytes.count == 32 else {
                throw UsageError.other("the daemon answered ready without a 32-byte key")
            }
            defer { Wipe.bytes(&bytes) }
            switch raw {
            case .base64: print(key)
            case .hex: print(Hex.encode(bytes))
            }
        }
    }
}

/// `keyvault kdf calibrate` moved to the daemon's executable, which runs the KDF (the CLI links
/// no crypto library): a script that still calls it is told where, with a usage error.
struct MovedKDFCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kdf", abstract: "Moved: keyvaultd --calibrate-kdf 500ms measures Argon2id and proposes a [kdf] policy.",
        shouldDisplay: false)

    @Argument(parsing: .allUnrecognized) var rest: [String] = []

    func run() async throws {
        throw UsageError("the KDF is calibrated by the daemon's executable now: keyvaultd --calibrate-kdf 500ms [--calibrate-memory-mib 256]")
    }
}
