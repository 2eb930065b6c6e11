import Foundation
#if canImport(Glibc)
import Glibc
import KeyVaultProtocol
#endif

/// Where the PostgreSQL relay lives, from `postgres://USER[:PASSWORD]@HOST[:PORT]/DB`
/// (or `postgresql://`), with what the URL leaves out taken from libpq's
/// variables (PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE, PGSSLMODE) and
/// then libpq's defaults (localhost, 5432, the current user, a database named
/// after the user). A host starting with `/` is a Unix socket directory.
/// `description` never shows the password.
package struct PostgresRelayConfiguration: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// libpq's modes: `prefer` and `require` encrypt without checking the
    /// certificate (as libpq does); `verify-full` checks it against the system's roots.
    package enum TLSMode: String, Sendable, Equatable {
        case disable, prefer, require
        case verifyFull = "verify-full"
    }

    package var host: String
    package var port: Int
    package var user: String
    package var password: String?
    package var database: String
    package var tls: TLSMode

    package init(host: String = "localhost", port: Int = 5432, user: String, password: String? = nil,
                database: String? = nil, tls: TLSMode = .prefer) {
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.database = database ?? user
        self.tls = tls
    }

    /// The socket file when `host` is a directory (`HOST/.s.PGSQL.PORT`), as libpq names it.
    package var unixSocketPath: String? {
        host.hasPrefix("/") ? "\(host)/.s.PGSQL.\(port)" : nil
    }

    /// The URL without the password (`***` stands in for one).
    package var description: String {
        let secret = password == nil ? "" : ":***"
        if unixSocketPath != nil { return "postgres://\(user)\(secret)@/\(database)?host=\(host)&port=\(port)" }
        return "postgres://\(user)\(secret)@\(host.contains(":") ? "[\(host)]" : host):\(port)/\(database)"
    }

    /// Debugger and `dump` output hide the password too.
    package var debugDescription: String { description }

    package var customMirror: Mirror {
        Mirror(self, children: ["host": host, "port": port, "user": user, "password": password == nil ? "nil" : "***",
                                "database": database, "tls": tls.rawValue])
    }

    /// Parses a `postgres://` or `postgresql://` URL; `environment` supplies what it leaves out.
    package init(parsing text: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        guard let schemeEnd = text.range(of: "://"), ["postgres", "postgresql"].contains(text[..<schemeEnd.lowerBound]) else {
            throw RelayError.badAddress("a PostgreSQL relay is postgres://USER[:PASSWORD]@HOST[:PORT]/DB")
        }
        var rest = Substring(text[schemeEnd.upperBound...])
        var query: Substring = ""
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        var path: Substring = ""
        if let slash = rest.firstIndex(of: "/") {
            path = rest[rest.index(after: slash)...]
            rest = rest[..<slash]
        }
        var user: String?, password: String?, host: String?, port: String?
        var hostPort = rest
        if let at = rest.lastIndex(of: "@") {
            let userInfo = rest[..<at]
            hostPort = rest[rest.index(after: at)...]
            if let colon = userInfo.firstIndex(of: ":") {
                user = try Self.decode(userInfo[..<colon], "user")
                password = try Self.decode(userInfo[userInfo.index(after: colon)...], "password")
            } else {
                user = try Self.decode(userInfo, "user")
            }
        }
        if hostPort.hasPrefix("[") {
            // [IPv6]:port
            guard let close = hostPort.firstIndex(of: "]") else { throw RelayError.badAddress("unclosed [ in the host") }
            host = String(hostPort[hostPort.index(after: hostPort.startIndex)..<close])
            let after = hostPort[hostPort.index(after: close)...]
            if after.hasPrefix(":") { port = String(after.dropFirst()) } else if !after.isEmpty {
                throw RelayError.badAddress("unexpected \(after) after the host")
            }
        } else if let colon = hostPort.lastIndex(of: ":") {
            host = try Self.decode(hostPort[..<colon], "host")
            port = String(hostPort[hostPort.index(after: colon)...])
        } else {
            host = try Self.decode(hostPort, "host")
        }
        var database = try Self.decode(path, "database")
        var tls: String?
        for pair in query.split(separator: "&") where !pair.isEmpty {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = String(parts[0])
            let value = try Self.decode(parts.count > 1 ? parts[1] : "", key)
            switch key {
            case "host": host = value
            case "port": port = value
            case "user": user = value
            case "password": password = value
            case "dbname": database = value
            case "sslmode": tls = value
            default: throw RelayError.badAddress("unknown parameter \(key) (known: host, port, user, password, dbname, sslmode)")
            }
        }
        func given(_ value: String?, _ variable: String) -> String? {
            if let value, !value.isEmpty { return value }
            if let value = environment[variable], !value.isEmpty { return value }
            return nil
        }
        let portText = given(port, "PGPORT") ?? "5432"
        guard let portNumber = Int(portText), (1...65535).contains(portNumber) else {
            throw RelayError.badAddress("port \(portText) is not a number from 1 to 65535")
        }
        let modeText = given(tls, "PGSSLMODE") ?? "prefer"
        guard let mode = TLSMode(rawValue: modeText) else {
            throw RelayError.badAddress("sslmode \(modeText) is not one of disable, prefer, require, verify-full")
        }
        let userName = given(user, "PGUSER") ?? Self.currentUser(environment)
        self.init(host: given(host, "PGHOST") ?? "localhost", port: portNumber, user: userName,
                  password: given(password, "PGPASSWORD"), database: given(database, "PGDATABASE") ?? userName, tls: mode)
    }

    private static func decode(_ part: Substring, _ what: String) throws -> String {
        guard let decoded = String(part).removingPercentEncoding else {
            throw RelayError.badAddress("bad percent-encoding in the \(what == "password" ? "password" : "\(what) \(part)")")
        }
        return decoded
    }

    private static func currentUser(_ environment: [String: String]) -> String {
        if let entry = getpwuid(geteuid()), let name = entry.pointee.pw_name { return String(cString: name) }
        return environment["USER"] ?? "postgres"
    }
}
