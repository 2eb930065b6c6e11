import ArgumentParser
import FoundationEssentials
import KeyVaultClient
import KeyVaultUnixSocket

struct Enroll: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "enroll",
        abstract: "Ask to join an account as a new device; shows the pairing code to type on a trusted device.")
    @OptionGroup var socket: SocketOptions
    @OptionGroup var account: AccountOption
    @Option(help: "This device's name, as the trusted device will list it.")
    var deviceName: String
    @Option(help: "Read this device's passphrase for the account from this file (first line).")
    var passphraseFile: String?
    @OptionGroup var identity: IdentityTokenOption

    func run() async throws {
        let id = try account.validated()
        let passphrase = try PassphraseInput.read(file: passphraseFile, prompt: "Passphrase for \(id) on this device: ", confirm: true)
        var body = ["passphrase": passphrase, "deviceName": deviceName]
        if let token = try identity.read() { body["identityToken"] = token }
        let answer = identity.explain(try await CLIRequest(socket: socket.path).send("POST", "/v1/accounts/\(id)/enroll", json: body),
                                      account: id, doing: "enrolling")
        if let code = answer.field("pairingCode") {
            StandardError.print("""
                Pairing code: \(code.prefix(3)) \(code.suffix(3))
                Type it on a trusted device of this account, which lists this device as "\(deviceName)":
                  keyvault approve --account \(id) --device-id \(answer.field("deviceId") ?? "?") --code \(code)
                Then, here: keyvault key get --account \(id) --wait 60
                """)
        }
        try answer.finish()
    }
}

struct Enrollments: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "enrollments",
        abstract: "List the devices asking to join an account (or dismiss one).", subcommands: [List.self, Dismiss.self], defaultSubcommand: List.self)

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List the devices asking to join an account.")
        @OptionGroup var socket: SocketOptions
        @OptionGroup var account: AccountOption

        func run() async throws {
            let id = try account.validated()
            try await CLIRequest(socket: socket.path).send("GET", "/v1/accounts/\(id)/enrollments").finish()
        }
    }

    struct Dismiss: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "dismiss", abstract: "Dismiss a request to join that is not yours: it is no longer answered or listed here.")
        @OptionGroup var socket: SocketOptions
        @OptionGroup var account: AccountOption
        @OptionGroup var device: DeviceIDOption

        func run() async throws {
            let id = try account.validated()
            try await CLIRequest(socket: socket.path).send("POST", "/v1/accounts/\(id)/enrollments/\(device.deviceID)/dismiss").finish()
        }
    }
}

struct Approve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "approve", abstract: "Approve a new device with the pairing code it shows.")
    @OptionGroup var socket: SocketOptions
    @OptionGroup var account: AccountOption
    @OptionGroup var device: DeviceIDOption
    @Option(help: "The 6-digit pairing code the new device shows.")
    var code: String

    func run() async throws {
        let id = try account.validated()
        try await CLIRequest(socket: socket.path).send("POST", "/v1/accounts/\(id)/enrollments/\(device.deviceID)/approve", json: ["pairingCode": code]).finish()
    }
}

struct Devices: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "devices", abstract: "List an account's devices: trusted, pending, revoked.")
    @OptionGroup var socket: SocketOptions
    @OptionGroup var account: AccountOption

    func run() async throws {
        let id = try account.validated()
        try await CLIRequest(socket: socket.path).send("GET", "/v1/accounts/\(id)/devices").finish()
    }
}

/// `key get --wait N`: holds the read open in slices and says what it waits for.
enum KeyWait {
    static func read(socket: String, path: String, seconds: Int) async throws -> CLIAnswer {
        let request = CLIRequest(socket: socket)
        // First ask without waiting, so the person sees at once what the key waits for.
        var answer = try await request.send("GET", path)
        guard seconds > 0 else { return answer }
        let deadline = ContinuousClock.now + .seconds(seconds)
        var lastReason = ""
        // A generation or key ID not heard of yet is waited for too (API.md): the daemon holds such a
        // read. An `unknown` it answers before the slice ends was not held (no such account): final.
        let waitsForUnknown = !path.hasSuffix("/keys/current")
        while answer.state == "pending" || (waitsForUnknown && answer.state == "unknown") {
            let reason = answer.field("reason") ?? (answer.state == "unknown" ? "not announced here yet" : "pending")
            let left = Int((deadline - ContinuousClock.now).components.seconds)
            if reason != lastReason, Terminal.standardErrorIsOne {
                StandardError.print("waiting: \(reason) since \(answer.field("since") ?? "now") (up to \(max(left, 0)) s more)")
                lastReason = reason
            }
            let slice = max(0, min(left, 5))
            guard slice > 0 else { break }
            let asked = ContinuousClock.now
            answer = try await request.send("GET", path + "?wait=\(slice)")
            if answer.state == "unknown", ContinuousClock.now - asked < .seconds(slice) / 2 { break }
        }
        return answer
    }
}
