import NIOCore
#if canImport(Glibc)
import Glibc
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultStore
#endif

/// `struct ucred` as the kernel fills it for `SO_PEERCRED`.
private struct KernelPeerCredentials: Sendable {
    var pid: Int32 = 0
    var uid: UInt32 = 0
    var gid: UInt32 = 0
}

/// Reads the peer's credentials once, when the connection is set up: the
/// kernel's word, kept for every request on the connection. A connection
/// whose credentials could not be read keeps none, and is refused.
enum PeerCredentialsReader {
    static func read(_ channel: any Channel, into connection: Connection) {
        guard let provider = channel as? any SocketOptionProvider else { return }
        // On the channel's own event loop this future is already complete.
        let future: EventLoopFuture<KernelPeerCredentials> = provider.unsafeGetSocketOption(level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
        future.whenSuccess { raw in
            connection.setPeer(PeerCredentials(uid: raw.uid, gid: raw.gid, pid: raw.pid))
        }
    }
}
