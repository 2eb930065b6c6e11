import Logging
import ServiceLifecycle
import UnixSignals
import KeyVaultEngine
import KeyVaultPolicy

/// SIGHUP reloads the policy; a policy that does not load is refused, logged
/// with its file and line, and the one in force stays.
struct PolicyReloader: Service {
    let store: PolicyStore
    let logger: Logger

    func run() async throws {
        for await _ in await UnixSignalsSequence(trapping: .sighup).cancelOnGracefulShutdown() {
            do {
                let policy = try store.reload()
                logger.notice("policy reloaded", metadata: ["policy": "\(policy)"])
            } catch {
                logger.error("policy reload refused; keeping the policy in force", metadata: ["problem": "\(error)"])
            }
        }
    }
}
