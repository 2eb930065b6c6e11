import KeyVaultRelay
import KeyVaultRelayStore
import Logging
import ServiceLifecycle

/// Carries the store's wake-ups to the held reads of the accounts they name.
/// On graceful shutdown it answers every held read at once: it is listed
/// after the HTTP server, so the group stops it first, and the server then
/// drains answers that are already on their way.
struct WakeService: Service {
    let relay: any Relay
    let waiters: Waiters
    let logger: Logger

    func run() async throws {
        let wakeups = relay.wakeups()
        try await withGracefulShutdownHandler {
            for try await change in wakeups.cancelOnGracefulShutdown() { waiters.storeChanged(change, path: .store) }
        } onGracefulShutdown: {
            let answered = waiters.drain()
            logger.notice("keyvault-relay stopping", metadata: ["heldReadsAnswered": "\(answered)"])
        }
    }
}
