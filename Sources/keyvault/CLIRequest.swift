import ArgumentParser
import Foundation
import KeyVaultClient
import KeyVaultCrypto
import KeyVaultProtocol

/// One request to the daemon and its answer, printed the CLI's way.
struct CLIRequest {
    let socket: String

    func send(_ method: String, _ path: String, json: [String: String]? = nil) async throws -> CLIAnswer {
        try await send(method, path, object: json)
    }

    /// A body with nested values (arrays of objects).
    func send(_ method: String, _ path: String, object: [String: Any]?) async throws -> CLIAnswer {
        let body = try object.map { try JSONSerialization.data(withJSONObject: $0, options: [.sortedKeys]) }.map { [UInt8]($0) }
        do {
            let result = try await SocketHTTPClient.request(socket: socket, method, path, body: body, expectedPeerUID: try Self.daemonUID())
            return CLIAnswer(result: result)
        } catch let error as SocketHTTPError {
            StandardError.print("keyvault: \(error)")
            throw ExitCode(1)
        }
    }
}

extension CLIRequest {
    /// The uid the daemon must run as: `$KEYVAULT_DAEMON_UID` (set by `--daemon-uid`; a uid or a user name), else this user's own.
    /// A socket served by any other uid is refused before a byte is sent.
    static func daemonUID() throws -> UInt32 {
        guard let text = ProcessInfo.processInfo.environment["KEYVAULT_DAEMON_UID"], !text.isEmpty else { return geteuid() }
        if let uid = UInt32(text) { return uid }
        guard let user = getpwnam(text) else {
            StandardError.print("keyvault: --daemon-uid (or $KEYVAULT_DAEMON_UID) must be a uid or a user name; there is no user '\(text)'")
            throw ExitCode(64)
        }
        return user.pointee.pw_uid
    }
}

struct CLIAnswer {
    let result: HTTPResult
    let object: [String: Any]

    init(result: HTTPResult) {
        self.result = result
        self.object = (try? JSONSerialization.jsonObject(with: Data(result.body))) as? [String: Any] ?? [:]
    }

    var state: String { object["state"] as? String ?? "error" }
    func field(_ name: String) -> String? { object[name] as? String }

    /// Prints the answer and exits by its state.
    func finish() throws {
        if let data = try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]),
           !object.isEmpty {
            print(String(decoding: data, as: UTF8.self))
        } else {
            print(result.text)
        }
        switch state {
        case "ready": return
        case "pending": throw ExitCode(75)
        default:
            StandardError.print("keyvault: \(state): \(field("error") ?? "HTTP \(result.status)")")
            throw ExitCode(1)
        }
    }
}
