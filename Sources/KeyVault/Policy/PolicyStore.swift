import Synchronization
#if canImport(Glibc)
import Glibc
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultStore
#endif

/// The policy in force, swapped whole on reload so a request sees one policy.
public final class PolicyStore: Sendable {
    private let state: Mutex<Policy>
    public let directory: String?

    public init(policy: Policy, directory: String?) {
        self.state = Mutex(policy)
        self.directory = directory
    }

    public var current: Policy { state.withLock { $0 } }

    /// Reloads from the directory; a bad policy throws and the old one stays.
    @discardableResult
    public func reload() throws(PolicyError) -> Policy {
        guard let directory else { return current }
        let policy = try PolicyLoader.load(directory: directory, selfUID: geteuid())
        state.withLock { $0 = policy }
        return policy
    }
}
