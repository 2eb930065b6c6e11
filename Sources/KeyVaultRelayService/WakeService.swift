import KeyVaultRelay
import KeyVaultRelayStore
import ServiceLifecycle

/// Carries the store's wake-ups to the held reads of the accounts they name.
/// On graceful shutdown it answers every held read at once: it is listed
/// after the HTTP server, so the group stops it first, and the server then
/// drains answers that are already on their way.
struct WakeService: Service {
    let relay: any Relay
    let waiters: Waiters

    func run() async throws {
        let wakeups = relay.wakeups()
        try await withGracefulShutdownHandler {
            for try await change in wakeups.cancelOnGracefulShutdown() { waiters.storeChanged(change, path: .store) }
        } onGracefulShutdown: {
            waiters.drain()
        }
    }
}
