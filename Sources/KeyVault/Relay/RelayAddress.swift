/// `--relay`: `sqlite:PATH`, or a plain path, for the embedded relay
/// (`postgres://…` comes with the PostgreSQL relay).
public enum RelayAddress: Sendable, Equatable {
    case sqlite(path: String)

    public init(parsing text: String) throws {
        if text.hasPrefix("sqlite:") {
            let path = String(text.dropFirst("sqlite:".count))
            guard !path.isEmpty else { throw RelayError.badAddress("sqlite: needs a path") }
            self = .sqlite(path: path)
        } else if text.hasPrefix("postgres://") || text.hasPrefix("postgresql://") {
            throw RelayError.badAddress("the PostgreSQL relay is not built yet; use sqlite:PATH")
        } else if text.contains("://") {
            throw RelayError.badAddress("unknown relay scheme in \(text); use sqlite:PATH or a path")
        } else {
            guard !text.isEmpty else { throw RelayError.badAddress("empty") }
            self = .sqlite(path: text)
        }
    }

    public func open() throws -> any Relay {
        switch self {
        case .sqlite(let path): return try SQLiteRelay(path: path)
        }
    }
}
