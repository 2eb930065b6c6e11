/// Why a request did not reach the daemon, or what came back was not an answer.
public enum KeyVaultClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Nothing answers at the socket (the daemon is not running, or the path is wrong).
    case unreachable(socket: String, reason: String)
    /// The socket is served by another uid than the one expected: nothing was sent.
    case wrongPeer(socket: String, expected: UInt32, actual: UInt32)
    /// Someone other than the daemon's uid or root could replace the socket: nothing was sent.
    case untrustedPath(socket: String, reason: String)
    /// The daemon's answer is not one this client understands.
    case malformedAnswer(String)
    /// `$KEYVAULT_DAEMON_UID` names no uid or user: nothing was sent.
    case unknownDaemonUser(String)
    /// The request cannot be written as asked (a control character in its path or a header): nothing was sent.
    case unwritableRequest(String)

    /// Trying again would fail the same way: the socket's peer or path was refused, or the request cannot be written.
    var refusesThePeer: Bool {
        switch self {
        case .wrongPeer, .untrustedPath, .unknownDaemonUser, .unwritableRequest: return true
        case .unreachable, .malformedAnswer: return false
        }
    }

    public var description: String {
        switch self {
        case .unreachable(let socket, let reason):
            return "cannot reach keyvaultd at \(socket) (\(reason)); is it running? "
                + "(the socket is --socket, else $KEYVAULT_SOCKET, else $XDG_RUNTIME_DIR/keyvaultd.sock, else ~/.local/state/keyvaultd/keyvaultd.sock)"
        case .wrongPeer(let socket, let expected, let actual):
            return "refusing to talk to \(socket): it is served by uid \(actual), not by uid \(expected) as expected; "
                + "another user may have taken the daemon's place (nothing was sent). If the daemon runs as uid \(actual) "
                + "on purpose, say so with --daemon-uid \(actual) or $KEYVAULT_DAEMON_UID"
        case .untrustedPath(let socket, let reason):
            return "refusing to talk to \(socket): \(reason), so another user could put their own socket there (nothing was sent)"
        case .malformedAnswer(let what):
            return "the daemon's answer is not understood: \(what)"
        case .unknownDaemonUser(let text):
            return "$KEYVAULT_DAEMON_UID must be a uid or a user name; there is no user '\(text.prefix(64))' (nothing was sent)"
        case .unwritableRequest(let what):
            return "the request cannot be sent: \(what) (nothing was sent)"
        }
    }
}
