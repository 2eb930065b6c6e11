import Logging
import PostgresNIO
import Synchronization
import KeyVaultProtocol
import KeyVaultRelay

/// Sends the store's wake-ups (`pg_notify` with each account a commit touched and
/// the last cursor it stored, `account cursor`) after the commit, from one task
/// per relay, a batch at a time in one statement (one transaction, one round
/// trip): never in a write's own transaction.
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

    /// The most wake-ups one statement sends (each is a parameter; PostgreSQL takes 65,535).
    static let perStatement = 256

    /// `SELECT pg_notify($1, $2), pg_notify($1, $3), …`: the channel, then each account's payload.
    static func notifying(_ wakeups: ArraySlice<(AccountID, RelayCursor)>) -> PostgresQuery {
        var bindings = PostgresBindings(capacity: wakeups.count + 1)
        bindings.append(PostgresRelaySchema.channel)
        var calls: [String] = []
        calls.reserveCapacity(wakeups.count)
        for (index, (account, through)) in wakeups.enumerated() {
            bindings.append(RelayWake.payload(account, through: through))
            calls.append("pg_notify($1, $\(index + 2))")
        }
        return PostgresQuery(unsafeSQL: "SELECT " + calls.joined(separator: ", "), binds: bindings)
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
            // One statement, so one round trip and one commit (the notify lock taken once), for up to
            // `perStatement` accounts; each payload a parameter of its own, naming one account.
            var start = batch.startIndex
            while start < batch.endIndex {
                let part = batch[start..<min(start + Self.perStatement, batch.endIndex)]
                for try await _ in try await client.query(Self.notifying(part), logger: logger) {}
                start = part.endIndex
            }
        } catch {
            // The rows are stored; readers elsewhere see them at their next read.
            logger.warning("relay wake-ups not sent", metadata: ["accounts": "\(batch.count)", "problem": "\(PostgresRelay.reason(error))"])
        }
    }
}
