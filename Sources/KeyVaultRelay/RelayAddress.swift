import Foundation
import KeyVaultProtocol

/// `--relay`: `sqlite:PATH`, or a plain path, for the embedded relay;
/// `https://HOST:PORT` (repeatable, to fail over) for the relay service;
/// `postgres://…` or `postgresql://…` for the PostgreSQL relay.
package enum RelayAddress: Sendable, Equatable {
    case sqlite(path: String)
    case postgres(PostgresRelayConfiguration)
    /// `keyvault-relay` instances, tried in order.
    case service(urls: [String])

    /// Several `--relay` options: relay service URLs, each an instance of one service.
    package init(parsing texts: [String], environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        guard let first = texts.first else { throw RelayError.badAddress("empty") }
        if texts.count == 1 {
            self = try RelayAddress(parsing: first, environment: environment)
            return
        }
        var urls: [String] = []
        for text in texts {
            guard case .service(let one) = try RelayAddress(parsing: text, environment: environment) else {
                throw RelayError.badAddress("several --relay options name instances of one relay service: https:// URLs only")
            }
            urls += one
        }
        self = .service(urls: urls)
    }

    /// `environment` fills in what a `postgres://` URL leaves out (PGHOST, PGPORT, …).
    package init(parsing text: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        if text.hasPrefix("sqlite:") {
            let path = String(text.dropFirst("sqlite:".count))
            guard !path.isEmpty else { throw RelayError.badAddress("sqlite: needs a path") }
            self = .sqlite(path: path)
        } else if text.hasPrefix("postgres://") || text.hasPrefix("postgresql://") {
            self = .postgres(try PostgresRelayConfiguration(parsing: text, environment: environment))
        } else if text.hasPrefix("https://") || text.hasPrefix("http://") {
            guard let url = URLComponents(string: text), let host = url.host, !host.isEmpty, url.user == nil, url.password == nil,
                  url.query == nil, url.fragment == nil, url.path.isEmpty || url.path == "/" else {
                throw RelayError.badAddress("a relay service is https://HOST[:PORT], without a path, user or query")
            }
            guard url.portIsValid else { throw RelayError.badAddress("a relay service's port is a number from 1 to 65535") }
            // Plain HTTP shows every device's metadata to the network: only to a terminator on this machine.
            guard url.scheme == "https" || ["127.0.0.1", "::1", "[::1]", "localhost"].contains(host) else {
                throw RelayError.badAddress("http:// is for a relay on this machine (127.0.0.1, ::1, localhost); use https://")
            }
            self = .service(urls: [text])
        } else if text.contains("://") {
            // The scheme alone: the rest may hold a password.
            let scheme = text.components(separatedBy: "://")[0]
            throw RelayError.badAddress("unknown relay scheme \(scheme)://; use sqlite:PATH, a path, https://HOST:PORT or postgres://…")
        } else {
            guard !text.isEmpty else { throw RelayError.badAddress("empty") }
            self = .sqlite(path: text)
        }
    }
}

extension RelayAddress: CustomStringConvertible {
    /// Never shows a password.
    package var description: String {
        switch self {
        case .sqlite(let path): return "sqlite:\(path)"
        case .postgres(let configuration): return configuration.description
        case .service(let urls): return urls.joined(separator: ", ")
        }
    }
}
