package import Hummingbird
import KeyVaultEngine
package import KeyVaultPolicy

/// The request context: the connection it came on, who is calling (from the
/// connection's peer credentials) and the body limit.
package struct VaultRequestContext: RequestContext {
    package var coreContext: CoreRequestContextStorage
    package let peer: PeerCredentials?
    /// Where a request the daemon holds open (a waiting read, an event stream) is filed.
    let connection: Connection

    package init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        // A channel not set up by the server (none is) would have no credentials, and be refused.
        connection = ConnectionDirectory.shared.lookup(source.channel) ?? Connection()
        peer = connection.peer
    }

    /// Request bodies are small JSON objects.
    package var maxUploadSize: Int { Self.maxBodySize }
    static let maxBodySize = 64 * 1024
}
