import ArgumentParser
import FoundationEssentials
import KeyVaultClient
import KeyVaultUnixSocket

/// `GET /v1/health`: whether the daemon answers (any caller the policy grants `health`).
struct Health: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "health", abstract: "Whether the daemon answers, and its version.")
    @OptionGroup var socket: SocketOptions

    func run() async throws {
        try await CLIRequest(socket: socket.path).send("GET", "/v1/health").finish()
    }
}

/// `GET /v1/server`: the HTTP layer's limits and what clients hold now.
struct Server: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "server", abstract: "The daemon's connection limits, and the connections, waiting reads and event streams open now.")
    @OptionGroup var socket: SocketOptions

    func run() async throws {
        try await CLIRequest(socket: socket.path).send("GET", "/v1/server").finish()
    }
}

/// `GET /v1/metrics`: the daemon's counters as Prometheus text, printed as they come.
struct Metrics: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "metrics", abstract: "The daemon's counters, in Prometheus's text format.")
    @OptionGroup var socket: SocketOptions

    func run() async throws {
        let answer = try await CLIRequest(socket: socket.path).send("GET", "/v1/metrics")
        guard answer.result.status == 200 else { return try answer.finish() }
        print(answer.result.text, terminator: "")
    }
}

/// `DELETE /v1/accounts/{user}`: everything of the account on this device, or on every device.
struct Delete: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete",
        abstract: "Delete an account from this device (--everywhere: from every device, through the relay).",
        discussion: "Nothing can bring the account's keys back unless a device or a recovery kit still holds them, so it asks for --yes.")
    @OptionGroup var socket: SocketOptions
    @OptionGroup var account: AccountOption
    @Flag(help: "Destroy the account on every device of its circle, not only here.")
    var everywhere = false
    @Flag(help: "Yes: delete it.")
    var yes = false

    func validate() throws {
        guard yes else { throw ValidationError("deleting \(account.account) destroys its keys\(everywhere ? " on every device" : " here"); say --yes") }
    }

    func run() async throws {
        let id = try account.validated()
        try await CLIRequest(socket: socket.path).send("DELETE", "/v1/accounts/\(id)" + (everywhere ? "?everywhere=true" : "")).finish()
    }
}

/// `GET /v1/accounts/{user}/events`: one JSON line per event, until interrupted.
struct Events: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events",
        abstract: "Follow an account's events (key-ready, rotated, locked…): one JSON line each, until interrupted.",
        discussion: "A dropped connection (the daemon restarting) is resumed after the last event seen; `resync` says events may have been missed.")
    @OptionGroup var socket: SocketOptions
    @OptionGroup var account: AccountOption
    @Option(name: .customLong("last-event-id"), help: "Resume after this event's id (from an earlier run).")
    var lastEventID: String?
    @Option(help: "Stop after this many events.")
    var count: Int?

    func validate() throws {
        if let count, count < 1 { throw ValidationError("--count takes a number from 1") }
    }

    func run() async throws {
        let id = try account.validated()
        let client = try CLIRequest(socket: socket.path).client()
        var seen = 0
        do {
            for try await event in client.events(id, lastEventID: lastEventID) {
                // As the wire has them: a generation is a number.
                let fields = event.fields.mapValues { JSONValue.string($0) }.merging(event.numbers.mapValues { JSONValue.int($0) }) { _, number in number }
                var object: [String: JSONValue] = ["event": .string(event.name), "fields": .object(fields)]
                if let id = event.id { object["id"] = .string(id) }
                // Written at once, not buffered: a script reads each event as it happens.
                let line = Array((try JSONValue.text(object, pretty: false) + "\n").utf8)
                do throws(FileDescriptorOutput.Failure) {
                    try FileDescriptorOutput.standardOutput.write(line)
                } catch {
                    // The reader went away (`| head -1`): stop as a process SIGPIPE ends would, 141; else say why.
                    if !error.readerGone { StandardError.print("keyvault: writing an event to standard output: \(error)") }
                    throw ExitCode(error.readerGone ? 141 : CLIExit.other)
                }
                seen += 1
                if let count, seen >= count { return }
            }
        } catch let refusal as Refusal {
            StandardError.print("keyvault: \(refusal)")
            throw ExitCode(CLIExit.refused(refusal.state.rawValue))
        } catch let error as KeyVaultClientError {
            throw CLIRequest.exit(error)
        }
    }
}
