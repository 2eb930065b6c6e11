#if canImport(Glibc)
import Glibc
#endif

/// Whose process a client agrees to talk to on the socket.
public enum DaemonUID: Sendable, Equatable {
    /// This process's own uid: a daemon the user runs for themselves.
    case own
    /// Its own uid; else the socket's owner, if only that owner or root could
    /// have put the socket where it is (no folder above it is writable by
    /// others: `/run/keyvaultd`, not `/tmp`). The default.
    case ownOrSocketOwner
    /// Exactly this uid (a system daemon's user, say).
    case uid(UInt32)

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
