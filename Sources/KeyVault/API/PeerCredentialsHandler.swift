import NIOCore
import Synchronization
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

/// Reads the peer's credentials once, when the connection is set up, and
/// files them under the channel until it closes. Requests look them up; a
/// connection whose credentials could not be read is refused.
final class PeerCredentialsHandler: ChannelInboundHandler, RemovableChannelHandler, Sendable {
    /// Passes every read on untouched (NIO requires a direction).
    typealias InboundIn = NIOAny

    func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel
        let id = ObjectIdentifier(channel)
        guard let provider = channel as? any SocketOptionProvider else { return }
        // On the channel's own event loop this future is already complete.
        let future: EventLoopFuture<KernelPeerCredentials> = provider.unsafeGetSocketOption(level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
        future.whenSuccess { raw in
            PeerCredentialRegistry.shared.register(id, PeerCredentials(uid: raw.uid, gid: raw.gid, pid: raw.pid))
        }
        channel.closeFuture.whenComplete { _ in PeerCredentialRegistry.shared.remove(id) }
    }
}

/// Live connections' credentials, keyed by channel.
final class PeerCredentialRegistry: Sendable {
    static let shared = PeerCredentialRegistry()
    private let entries = Mutex<[ObjectIdentifier: PeerCredentials]>([:])

    func register(_ id: ObjectIdentifier, _ credentials: PeerCredentials) { entries.withLock { $0[id] = credentials } }
    func remove(_ id: ObjectIdentifier) { _ = entries.withLock { $0.removeValue(forKey: id) } }
    func lookup(_ channel: any Channel) -> PeerCredentials? { entries.withLock { $0[ObjectIdentifier(channel)] } }
}
