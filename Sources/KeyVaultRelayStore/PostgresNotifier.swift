import Logging
import PostgresNIO
import Synchronization
import KeyVaultProtocol

/// Sends the store's wake-ups (`pg_notify` with each account a commit touched)
/// after the commit, from one task per relay, a batch at a time in one
/// transaction: never in a write's own transaction.
///
/// PostgreSQL serializes the commits of every transaction that notified (one
/// lock on the database, taken at commit): in a write's transaction it would
/// be the one lock all accounts' writes wait on. Here only this task takes it,
/// once per batch, after the writes committed, so readers woken on any
/// instance see them. A crash between a commit and its wake-up loses the
/// wake-up, not the rows: a held read on another instance answers them when
/// it next reads (at its hold's end at the latest, 30 s for a device).
package final class PostgresNotifier: Sendable {
    private let pending = Mutex<[AccountID]>([])
    private let signals: AsyncStream<Void>
    private let signal: AsyncStream<Void>.Continuation

    package init() {
        (signals, signal) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// Queues a wake-up for each account (once per batch however often it is named).
    func notify(_ accounts: [AccountID]) {
        guard !accounts.isEmpty else { return }
        pending.withLock { queued in
            for account in accounts where !queued.contains(account) { queued.append(account) }
        }
        signal.yield()
    }

    /// Ends `run` once what is queued has been sent.
    func finish() { signal.finish() }

    func run(client: PostgresClient, logger: Logger) async {
        for await _ in signals {
            await send(client: client, logger: logger)
        }
        await send(client: client, logger: logger)
    }

    private func send(client: PostgresClient, logger: Logger) async {
        let batch = pending.withLock { queued -> [AccountID] in
            defer { queued.removeAll() }
            return queued
        }
        guard !batch.isEmpty else { return }
        do {
            try await client.withConnection { connection in
                try await connection.query("BEGIN", logger: logger)
                do {
                    // One statement per account, as every statement here names one.
                    for account in batch {
                        for try await _ in try await connection.query(
                            "SELECT pg_notify(\(PostgresRelaySchema.channel), \(account.rawValue))", logger: logger) {}
                    }
                    try await connection.query("COMMIT", logger: logger)
                } catch {
                    _ = try? await connection.query("ROLLBACK", logger: logger)
                    throw error
                }
            }
        } catch {
            // The rows are stored; readers elsewhere see them at their next read.
            logger.warning("relay wake-ups not sent", metadata: ["accounts": "\(batch.count)", "problem": "\(PostgresRelay.reason(error))"])
        }
    }
}
