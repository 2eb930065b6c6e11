import Logging
import PostgresNIO
import Synchronization
import KeyVaultProtocol
import KeyVaultRelay

/// Sends the store's wake-ups (`pg_notify` with each account a commit touched and
/// the last cursor it stored, `account cursor`) after the commit, from one task per relay, a batch at a time in one
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
    /// The accounts owed a wake-up, in the order first named, each with the last cursor stored.
    private let pending = Mutex<(order: [AccountID], through: [AccountID: RelayCursor])>(([], [:]))
    private let signals: AsyncStream<Void>
    private let signal: AsyncStream<Void>.Continuation

    package init() {
        (signals, signal) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// Queues a wake-up for each batch's account (once per send however often it is named), with
    /// the last cursor stored for it: a held read that has read that far is not woken by it.
    func notify(_ batches: [StoredBatch]) {
        let stored = batches.filter { !$0.rows.isEmpty }
        guard !stored.isEmpty else { return }
        pending.withLock { queued in
            for batch in stored {
                if let known = queued.through[batch.account] {
                    queued.through[batch.account] = max(known, batch.through)
                } else {
                    queued.order.append(batch.account)
                    queued.through[batch.account] = batch.through
                }
            }
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
        let batch = pending.withLock { queued -> [(AccountID, RelayCursor)] in
            defer { queued = ([], [:]) }
            return queued.order.map { ($0, queued.through[$0]!) }
        }
        guard !batch.isEmpty else { return }
        do {
            try await client.withConnection { connection in
                try await connection.query("BEGIN", logger: logger)
                do {
                    // One statement per account, as every statement here names one.
                    for (account, through) in batch {
                        for try await _ in try await connection.query(
                            "SELECT pg_notify(\(PostgresRelaySchema.channel), \(RelayWake.payload(account, through: through)))",
                            logger: logger) {}
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
