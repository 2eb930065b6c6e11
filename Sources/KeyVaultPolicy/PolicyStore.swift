import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The policy in force, swapped whole on reload so a request sees one policy.
package final class PolicyStore: Sendable {
    private let state: Mutex<Policy>
    private let observers = Mutex<[@Sendable (Policy) -> Void]>([])
    package let directory: String?

    package init(policy: Policy, directory: String?) {
        self.state = Mutex(policy)
        self.directory = directory
    }

    package var current: Policy { state.withLock { $0 } }

    /// Called after each reload that succeeds, with the policy now in force
    /// (the server re-checks the requests it holds open).
    package func onReload(_ observer: @escaping @Sendable (Policy) -> Void) {
        observers.withLock { $0.append(observer) }
    }

    /// Reloads from the directory; a bad policy throws and the old one stays.
    @discardableResult
    package func reload() throws(PolicyError) -> Policy {
        guard let directory else { return current }
        let policy = try PolicyLoader.load(directory: directory, selfUID: geteuid())
        state.withLock { $0 = policy }
        for observer in observers.withLock({ $0 }) { observer(policy) }
        return policy
    }
}
