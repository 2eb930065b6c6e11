#if canImport(Glibc)
import Glibc
#endif

/// Whose process a client agrees to talk to on the socket.
public enum DaemonUID: Sendable, Equatable {
    /// This process's own uid: a daemon the user runs for themselves.
    case own
    /// Its own uid; else the socket's owner, if only that owner or root could
    /// have put the socket where it is (no folder above it is writable by
    /// others: `/run/keyvaultd`, not `/tmp`).
    case ownOrSocketOwner
    /// Exactly this uid (a system daemon's user, say).
    case uid(UInt32)
    /// What `$KEYVAULT_DAEMON_UID` says (a uid or a user name, as for the CLI's
    /// `--daemon-uid`), read at each request; without it, `ownOrSocketOwner`.
    /// The default: an operator names a system daemon's user once, for the CLI
    /// and every app alike.
    case configured

    /// The uid `configured` stands for; throws when the variable names no user
    /// (nothing is sent: the person meant some uid, and it is not known which).
    func resolved() throws(KeyVaultClientError) -> DaemonUID {
        guard case .configured = self else { return self }
        // The one variable (`getenv`), not ProcessInfo's whole environment made into a dictionary at each request.
        guard let value = getenv("KEYVAULT_DAEMON_UID"), case let text = String(cString: value), !text.isEmpty else { return .ownOrSocketOwner }
        guard let uid = DaemonUID(text) else { throw .unknownDaemonUser(text) }
        return uid
    }

    /// A uid in digits, or a user name.
    public init?(_ text: String) {
        if let uid = UInt32(text) {
            self = .uid(uid)
        } else if let user = getpwnam(text) {
            self = .uid(user.pointee.pw_uid)
        } else {
            return nil
        }
    }
}
