import ArgumentParser
import FoundationEssentials
import KeyVaultClient
import KeyVaultUnixSocket

/// One request to the daemon and its answer, printed the CLI's way.
struct CLIRequest {
    let socket: String

    func send(_ method: String, _ path: String, json: [String: String]? = nil, timeout: Duration = .seconds(60)) async throws -> CLIAnswer {
        try await send(method, path, object: json?.mapValues { JSONValue.string($0) }, timeout: timeout)
    }

    /// A body with nested values (arrays of objects).
    func send(_ method: String, _ path: String, object: [String: JSONValue]?, headers: [(String, String)] = [],
              timeout: Duration = .seconds(60)) async throws -> CLIAnswer {
        let body = try object.map { Array(try JSONValue.text($0, pretty: false).utf8) }
        do {
            let result = try await client().send(method, path, body: body, headers: headers, timeout: timeout)
            return CLIAnswer(result: result, path: path)
        } catch let error as KeyVaultClientError {
            throw Self.exit(error)
        }
    }

    /// The library's client, told which uid the daemon must run as.
    func client() throws -> KeyVaultClient {
        KeyVaultClient(socketPath: socket, daemonUID: try Self.daemonUID())
    }

    /// Says why the daemon was not reached; 2 when nothing answers (a script may try again), else 1.
    static func exit(_ error: KeyVaultClientError) -> ExitCode {
        StandardError.print("keyvault: \(error)")
        if case .unreachable = error { return ExitCode(CLIExit.unreachable) }
        return ExitCode(CLIExit.other)
    }
}

/// The exit statuses, documented in `keyvault --help` and the README.
enum CLIExit {
    static let ready: Int32 = 0
    static let other: Int32 = 1
    static let unreachable: Int32 = 2
    static let usage: Int32 = 64
    static let pending: Int32 = 75
    /// A script's one refusal that a person cures without changing the request: unlock, then ask again.
    static let locked: Int32 = 77

    /// The status for a refusal's state.
    static func refused(_ state: String) -> Int32 {
        state == "locked" ? locked : other
    }
}

extension CLIRequest {
    /// The uid the daemon must run as: `$KEYVAULT_DAEMON_UID` (set by `--daemon-uid`; a uid or a user name),
    /// else the library's default (this user's own, or the owner of a socket only it or root could have placed).
    static func daemonUID() throws -> DaemonUID {
        guard let text = ProcessInfo.processInfo.environment["KEYVAULT_DAEMON_UID"], !text.isEmpty else { return .ownOrSocketOwner }
        guard let uid = DaemonUID(text) else {
            StandardError.print("keyvault: --daemon-uid (or $KEYVAULT_DAEMON_UID) must be a uid or a user name; there is no user '\(text)'")
            throw ExitCode(CLIExit.usage)
        }
        return uid
    }
}

struct CLIAnswer {
    let result: DaemonResponse
    private(set) var object: [String: JSONValue]
    /// The account the request named, for sentences that say what to run next.
    let account: String?

    init(result: DaemonResponse, path: String = "") {
        self.result = result
        self.object = JSONValue.object(parsing: result.body) ?? [:]
        // `/v1/accounts/{account}/…`: a valid account ID needs no decoding.
        let parts = path.split(separator: "?").first?.split(separator: "/") ?? []
        account = parts.count >= 3 && parts[0] == "v1" && parts[1] == "accounts" ? String(parts[2]) : nil
    }

    var state: String { object["state"]?.string ?? "error" }
    func field(_ name: String) -> String? { object[name]?.string }

    /// The same answer with the daemon's sentence said in the CLI's words (its options, not the API's fields).
    func saying(_ error: String) -> CLIAnswer {
        var answer = self
        answer.object["error"] = .string(error)
        return answer
    }

    /// Prints the answer and exits by its state.
    func finish() throws {
        if !object.isEmpty, let text = try? JSONValue.text(object, pretty: true) {
            print(text)
        } else {
            print(result.text)
        }
        try exitByState()
    }

    /// 0 for `ready`, 75 for `pending`, 77 for `locked`, else 1; the daemon's sentence on standard error.
    func exitByState() throws {
        switch state {
        case "ready": return
        case "pending": throw ExitCode(CLIExit.pending)
        case "locked":
            let unlock = "keyvault unlock --account " + (account ?? "ACCOUNT")
            StandardError.print("keyvault: locked: \(field("error") ?? "the account is locked"); run: \(unlock)")
            throw ExitCode(CLIExit.locked)
        default:
            StandardError.print("keyvault: \(state): \(field("error") ?? "HTTP \(result.status)")")
            throw ExitCode(CLIExit.refused(state))
        }
    }
}
