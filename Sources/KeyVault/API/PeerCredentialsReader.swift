import KeyVaultUnixSocket
import NIOCore
#if canImport(Glibc)
import Glibc
import KeyVaultEngine
import KeyVaultPolicy
#endif

/// Reads the peer's credentials once, when the connection is accepted: the
/// kernel's word, kept for every request on the connection. A connection
/// whose credentials could not be read keeps none, and is refused.
enum PeerCredentialsReader {
    /// On the channel's own event loop, where the option's future is already complete.
    static func read(_ channel: any Channel) -> PeerCredentials? {
        guard let provider = channel as? any SocketOptionProvider else { return nil }
        // `UnixSocket.Peer` is `struct ucred` as the kernel fills it for `SO_PEERCRED`.
        let future: EventLoopFuture<UnixSocket.Peer> = provider.unsafeGetSocketOption(level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
        let read = ReadOnce()
        future.assumeIsolated().whenSuccess { raw in read.value = PeerCredentials(uid: raw.uid, gid: raw.gid, pid: raw.pid) }
        return read.value
    }

    private final class ReadOnce {
        var value: PeerCredentials?
    }
}
