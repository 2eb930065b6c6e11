public import Hummingbird
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultStore

/// The request context: who is calling (from the connection's peer
/// credentials) and the body limit.
public struct VaultRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public let peer: PeerCredentials?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        peer = PeerCredentialRegistry.shared.lookup(source.channel)
    }

    /// Request bodies are small JSON objects.
    public var maxUploadSize: Int { 64 * 1024 }
}
