import Logging
import PostgresNIO
import KeyVaultProtocol
import KeyVaultRelay

/// One connection that LISTENs on the relay's channel and rings every
/// `wakeups()` stream on each NOTIFY. When the connection is lost it
/// reconnects, backing off from 100 ms doubling to 5 s; after each (re)connect
/// it rings once, so readers pick up what landed while it was away.
package struct PostgresRelayListener: Sendable {
    let configuration: PostgresConnection.Configuration
    package let state: PostgresRelayState
    let logger: Logger

    package func run() async {
        var delay: Duration = .milliseconds(100)
        var attempt = 0
        while !Task.isCancelled {
            attempt += 1
            let connection: PostgresConnection
            do {
                connection = try await PostgresConnection.connect(configuration: configuration, id: attempt, logger: logger)
            } catch {
                guard !Task.isCancelled else { return }
                let why = PostgresRelay.reason(error)
                state.failed(why)
                logger.debug("relay listener: \(why); retrying in \(delay)")
                guard (try? await Task.sleep(for: delay)) != nil else { return }
                delay = min(delay * 2, .seconds(5))
                continue
            }
            var why = "the listening connection ended"
            do {
                try await withTaskCancellationHandler {
                    try await connection.listen(on: PostgresRelaySchema.channel) { notifications in
                        state.reached()
                        delay = .milliseconds(100)
                        logger.debug("relay listener connected")
                        // What landed while it was away may be for any account.
                        state.ring(.any)
                        for try await notification in notifications {
                            // The payload is the account a commit touched and its last cursor.
                            state.ring(RelayWake(payload: notification.payload))
                        }
                    }
                } onCancel: {
                    connection.close().whenComplete { _ in }
                }
            } catch {
                why = PostgresRelay.reason(error)
            }
            // Closed on every path: postgres-nio requires it before the connection is released.
            try? await connection.close()
            guard !Task.isCancelled else { return }
            state.failed(why)
            logger.debug("relay listener: \(why); reconnecting in \(delay)")
            guard (try? await Task.sleep(for: delay)) != nil else { return }
            delay = min(delay * 2, .seconds(5))
        }
    }
}
