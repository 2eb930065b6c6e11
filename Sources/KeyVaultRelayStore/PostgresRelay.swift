package import Foundation
package import Logging
import NIOCore
import NIOSSL
package import PostgresNIO
package import KeyVaultProtocol
package import KeyVaultRelay

/// The relay on a PostgreSQL server, for devices that share no file system.
///
/// Lifecycle: `PostgresRelay.open(_:)` (or `RelayAddress.open()`) starts two
/// background tasks — the connection pool (`PostgresClient.run`) and one
/// LISTEN connection — then migrates the schema. They run until `shutdown()`
/// (or until the relay is released). The daemon calls `shutdown()` after its
/// service group has returned.
///
/// When the server cannot be reached, every operation throws
/// `RelayError.unreachable` within `operationTimeout`, and `unreachableSince`
/// says from when; the pool and the listener keep reconnecting, so operations
/// work again once the server is back.
package final class PostgresRelay: RelayStore {
    package let configuration: PostgresRelayConfiguration
    /// The longest any one operation may take, connecting included.
    package let operationTimeout: Duration
    private let client: PostgresClient
    private let shared = PostgresRelayState()
    private let notifier = PostgresNotifier()
    private let logger: Logger
    private let tasks: [Task<Void, Never>]
    private let notifying: Task<Void, Never>
    /// The relay service's bulkheads between accounts (nil for a daemon, whose store is its own).
    private let bulkheads: Bulkheads?

    /// What keeps one account's operations from failing the others' (issue 33, item 5).
    package struct Bulkheads: Sendable {
        /// At most this many of one account's operations hold a pool connection at once
        /// (of `maximumConnections`, 8): the others wait their turn, and their deadline.
        package var connectionsPerAccount = 2

        package init(connectionsPerAccount: Int = 2) {
            self.connectionsPerAccount = connectionsPerAccount
        }
    }
    private let turns: AccountTurns?

    /// Starts the pool and the listener; `open` also migrates, so prefer it.
    ///
    /// With `bulkheads`, an account's operations take turns (`AccountTurns`), and a
    /// deadline missed is that operation's failure (`storeRefused`, an answer) while the
    /// store answers others, or while it waited for its own account's turn; only a store
    /// that answered nothing meanwhile is `unreachable` (so a silent shard, or one
    /// account's slow statements, never opens the service's breaker for every account).
    package init(configuration: PostgresRelayConfiguration, operationTimeout: Duration = .seconds(5),
                logger: Logger = Logger(label: "keyvault.relay.postgres"), bulkheads: Bulkheads? = nil) throws {
        self.configuration = configuration
        self.operationTimeout = operationTimeout
        self.logger = logger
        self.bulkheads = bulkheads
        turns = bulkheads.map { AccountTurns(perAccount: $0.connectionsPerAccount) }
        let client = PostgresClient(configuration: try Self.clientConfiguration(configuration), backgroundLogger: logger)
        self.client = client
        let listener = PostgresRelayListener(
            configuration: try Self.connectionConfiguration(configuration), state: shared, logger: logger)
        tasks = [
            Task { await client.run() },
            Task { await listener.run() },
        ]
        notifying = Task { [notifier] in await notifier.run(client: client, logger: logger) }
    }

    /// Connects, migrates the schema if it is behind, and returns the running relay.
    package static func open(_ configuration: PostgresRelayConfiguration, operationTimeout: Duration = .seconds(5),
                            logger: Logger = Logger(label: "keyvault.relay.postgres"), bulkheads: Bulkheads? = nil) async throws -> PostgresRelay {
        let relay = try PostgresRelay(configuration: configuration, operationTimeout: operationTimeout, logger: logger, bulkheads: bulkheads)
        do {
            try await relay.migrate()
        } catch {
            await relay.shutdown()
            throw error
        }
        return relay
    }

    deinit {
        notifying.cancel()
        tasks.forEach { $0.cancel() }
    }

    /// Sends the wake-ups still owed, stops the listener and closes the pool's connections;
    /// ends every `wakeups()` stream.
    package func shutdown() async {
        notifier.finish()
        _ = try? await withDeadline(operationTimeout) { [notifying] in await notifying.value }
        notifying.cancel()
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
        shared.finishAll()
    }

    /// Since when the server has been unreachable; nil while it answers.
    package var unreachableSince: Date? { shared.unreachableSince }

    package func publish(_ record: RelayRecord) async throws {
        try await publish(batch: [record])
    }

    /// One transaction: all the records or none; after it, one NOTIFY per account
    /// that stored a row (`PostgresNotifier`). Each account's part is its own statements (`PostgresPublish`), the
    /// accounts in byte order, so two batches of several accounts cannot deadlock;
    /// a batch of one account, as every write of the relay service is, touches one shard.
    package func publish(batch records: [RelayRecord]) async throws {
        try await publish(records, nonce: nil)
    }

    package func publish(batch records: [RelayRecord], spending nonce: RequestNonce) async throws -> StoredBatch {
        precondition(records.allSatisfy { $0.account == nonce.account }, "a signed write is one account's")
        return try await publish(records, nonce: nonce).first ?? StoredBatch(account: nonce.account, after: .start, through: .start, rows: [])
    }

    package func announce(_ batch: StoredBatch) {
        notifier.notify([batch])
    }

    /// What each account's part stored, in the order the parts were sent. A write without a nonce
    /// (a device's, the bench's) sends its wake-ups itself; a signed one leaves them to `announce`.
    @discardableResult
    private func publish(_ records: [RelayRecord], nonce: RequestNonce?) async throws -> [StoredBatch] {
        guard !records.isEmpty else { return [] }
        let parts = Dictionary(grouping: records, by: \.account)
            .sorted { Array($0.key.rawValue.utf8).lexicographicallyPrecedes(Array($1.key.rawValue.utf8)) }
            .map { PostgresPublish(account: $0.key, records: $0.value, nonce: nonce) }
        let stored = try await perform(account: parts.count == 1 ? parts[0].account : nil) { client, logger in
            try await client.withConnection { connection in
                var stored: [StoredBatch] = []
                try await Self.transaction(connection, logger: logger) { connection in
                    stored = []
                    for part in parts { stored.append(try await part.send(on: connection, logger: logger)) }
                }
                return stored
            }
        }
        if nonce == nil { notifier.notify(stored) }
        return stored
    }

    package func rows(account: AccountID, after cursor: RelayCursor, limit: Int) async throws -> [RelayRow] {
        try await perform(account: account) { client, logger in
            try await Self.decode(try await client.query("""
                SELECT cursor, kind, account, recipient, log_seq, body FROM keyvault_records \
                WHERE account = \(account.rawValue) AND cursor > \(cursor.value) ORDER BY cursor LIMIT \(Int64(max(limit, 0)))
                """, logger: logger))
        }
    }

    package func rows(account: AccountID, after cursor: RelayCursor, limit: Int, byteBudget: Int) async throws -> [RelayRow] {
        try await perform(account: account) { client, logger in
            // The page's sizes (octet_length reads no TOASTed bytes), a running sum over them, then the
            // bodies of the rows that fit: the first row, and each whose bodies with those before it are
            // within the budget. One statement keyed by the account, so it runs on the account's shard.
            let account = account.rawValue
            return try await Self.decode(try await client.query("""
                WITH page AS (SELECT cursor, octet_length(body) AS size FROM keyvault_records \
                WHERE account = \(account) AND cursor > \(cursor.value) ORDER BY cursor LIMIT \(Int64(max(limit, 0)))), \
                sized AS (SELECT cursor, sum(size) OVER (ORDER BY cursor) AS total, row_number() OVER (ORDER BY cursor) AS n FROM page) \
                SELECT r.cursor, r.kind, r.account, r.recipient, r.log_seq, r.body FROM keyvault_records r JOIN sized s ON s.cursor = r.cursor \
                WHERE r.account = \(account) AND (s.n = 1 OR s.total <= \(Int64(byteBudget))) ORDER BY r.cursor
                """, logger: logger))
        }
    }

    package func handedOut(account: AccountID) async throws -> RelayCursor {
        try await cursor(account: account, "SELECT last FROM keyvault_account_cursors WHERE account = \(account.rawValue)")
    }

    package func lastCursor(account: AccountID) async throws -> RelayCursor {
        try await cursor(account: account, "SELECT coalesce(max(cursor), 0) FROM keyvault_records WHERE account = \(account.rawValue)")
    }

    /// The one cursor `query` answers for the account (0 when it answers no row), on the account's shard.
    private func cursor(account: AccountID, _ query: PostgresQuery) async throws -> RelayCursor {
        try await perform(account: account) { client, logger in
            var last: Int64 = 0
            for try await value in try await client.query(query, logger: logger).decode(Int64.self) {
                last = value
            }
            return RelayCursor(last)
        }
    }

    package func rows(account: AccountID, kinds: [RelayRecord.Kind], through: RelayCursor) async throws -> [RelayRow] {
        guard !kinds.isEmpty else { return [] }
        return try await perform(account: account) { client, logger in
            try await Self.decode(try await client.query("""
                SELECT cursor, kind, account, recipient, log_seq, body FROM keyvault_records \
                WHERE account = \(account.rawValue) AND kind = ANY(\(kinds.map(\.rawValue))) AND cursor <= \(through.value) ORDER BY cursor
                """, logger: logger))
        }
    }

    package func removeShares(account: AccountID, recipient: DeviceID, through: RelayCursor) async throws -> Int {
        try await perform(account: account) { client, logger in
            // The identity index's prefix (account, kind, coalesce(recipient, '')) finds them without reading the others.
            var removed = 0
            for try await _ in try await client.query("""
                DELETE FROM keyvault_records WHERE account = \(account.rawValue) AND kind = 'share' \
                AND coalesce(recipient, '') = \(recipient.hex) AND cursor <= \(through.value) RETURNING cursor
                """, logger: logger) {
                removed += 1
            }
            return removed
        }
    }

    package func ping() async throws {
        try await perform { client, logger in
            for try await _ in try await client.query("SELECT 1", logger: logger) {}
        }
    }

    package func remove(account: AccountID, cursors: [RelayCursor]) async throws {
        guard !cursors.isEmpty else { return }
        try await perform(account: account) { client, logger in
            // Keyed by account as every query here is, so a table partitioned by account prunes one partition.
            let query: PostgresQuery = "DELETE FROM keyvault_records WHERE account = \(account.rawValue) AND cursor = ANY(\(cursors.map(\.value)))"
            for try await _ in try await client.query(query, logger: logger) {}
        }
    }

    package func lastCursor() async throws -> RelayCursor? {
        try await perform { client, logger in
            var last: Int64 = 0
            for try await value in try await client.query("SELECT coalesce(max(cursor), 0) FROM keyvault_records", logger: logger).decode(Int64.self) {
                last = value
            }
            return RelayCursor(last)
        }
    }

    package func rows(after cursor: RelayCursor, limit: Int) async throws -> [RelayRow] {
        try await perform { client, logger in
            try await Self.decode(try await client.query("""
                SELECT cursor, kind, account, recipient, log_seq, body FROM keyvault_records \
                WHERE cursor > \(cursor.value) ORDER BY cursor, account LIMIT \(Int64(max(limit, 0)))
                """, logger: logger))
        }
    }

    private static func decode(_ rows: PostgresRowSequence) async throws -> [RelayRow] {
            var out: [RelayRow] = []
            for try await (cursor, kind, account, recipient, seq, body) in rows.decode((Int64, String, String, String?, Int64?, ByteBuffer).self) {
                // A row the relay mangled beyond parsing is skipped here; its contents are verified later.
                guard let kind = RelayRecord.Kind(rawValue: kind), let account = try? AccountID(validating: account) else { continue }
                let parsedRecipient = recipient.flatMap { DeviceID(hex: $0) }
                guard parsedRecipient != nil || recipient == nil else { continue }
                out.append(RelayRow(cursor: RelayCursor(cursor), record: RelayRecord(
                    kind: kind, account: account, recipient: parsedRecipient, logSeq: seq.map(LogSeq.init(stored:)),
                    body: Array(body.readableBytesView))))
            }
            return out
    }

    package func wakeups() -> AsyncStream<RelayWake> { shared.subscribe() }

    /// Applies the migrations this build knows and the server lacks, each in
    /// one transaction under an advisory lock. When all are applied already it
    /// only reads, so a role limited to SELECT and INSERT can start.
    package func migrate() async throws {
        try await perform { client, logger in
            let known = PostgresRelaySchema.migrations.map(\.version)
            let applied = try await client.withConnection { connection in
                try await Self.appliedMigrations(connection, logger: logger)
            }
            guard !Set(known).isSubset(of: applied) else { return }
            for migration in PostgresRelaySchema.migrations {
                try await client.withConnection { connection in
                    try await Self.transaction(connection, logger: logger) { connection in
                        try await connection.query("SELECT pg_advisory_xact_lock(\(PostgresRelaySchema.migrationLock))", logger: logger)
                        try await connection.query(PostgresQuery(unsafeSQL: PostgresRelaySchema.migrationsTable), logger: logger)
                        // Read again under the lock: another daemon may have just applied it.
                        guard try await !Self.appliedMigrations(connection, logger: logger).contains(migration.version) else { return }
                        for statement in migration.statements {
                            try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                        }
                        try await migration.data?(connection, logger)
                        try await connection.query("INSERT INTO keyvault_relay_migrations (version) VALUES (\(migration.version))", logger: logger)
                    }
                }
            }
        }
    }

    private static func appliedMigrations(_ connection: PostgresConnection, logger: Logger) async throws -> Set<String> {
        let exists = try await connection.query("SELECT to_regclass('keyvault_relay_migrations') IS NOT NULL", logger: logger)
        var found = false
        for try await (yes) in exists.decode(Bool.self) { found = yes }
        guard found else { return [] }
        var versions: Set<String> = []
        for try await version in try await connection.query("SELECT version FROM keyvault_relay_migrations", logger: logger).decode(String.self) {
            versions.insert(version)
        }
        return versions
    }

    /// The migrations this database records as applied, against this build's; reads only.
    package func schemaStatus() async throws -> SchemaStatus {
        let applied = try await perform { client, logger in
            try await client.withConnection { try await Self.appliedMigrations($0, logger: logger) }
        }
        return SchemaStatus(known: PostgresRelaySchema.migrations.map(\.version), applied: applied)
    }

    /// BEGIN … COMMIT, or ROLLBACK and the closure's own error (not wrapped, so `logSeqTaken` comes through).
    private static func transaction(_ connection: PostgresConnection, logger: Logger,
                                    _ body: (PostgresConnection) async throws -> Void) async throws {
        try await connection.query("BEGIN", logger: logger)
        do {
            try await body(connection)
            try await connection.query("COMMIT", logger: logger)
        } catch {
            _ = try? await connection.query("ROLLBACK", logger: logger)
            throw error
        }
    }

    /// Runs one operation under the deadline; anything but a `RelayError` becomes `unreachable`.
    /// `account`: the one account it touches, whose turn it takes first (with bulkheads).
    private func perform<T: Sendable>(account: AccountID? = nil,
                                      _ operation: @escaping @Sendable (PostgresClient, Logger) async throws -> T) async throws -> T {
        let client = client
        let logger = logger
        let turn: (AccountTurns, String)? = if let account, let turns = self.turns { (turns, account.rawValue) } else { nil }
        let started = ContinuousClock.now
        let tookTurn = AccountTurns.Taken(at: turn == nil ? started : nil)
        do {
            let value = try await withDeadline(operationTimeout) {
                guard let (turns, account) = turn else { return try await operation(client, logger) }
                // Given back when the operation ends, not at the deadline: its connection is busy until then.
                try await turns.take(account)
                tookTurn.set()
                defer { turns.give(account) }
                return try await operation(client, logger)
            }
            shared.reached()
            return value
        } catch let error as RelayError {
            if error.isAnswer { shared.reached() }
            throw error
        } catch is DeadlineExceeded {
            // This operation's own failure, not the store's, while nothing says the store is down (the
            // listener's connection holds, no operation failed to reach it): it waited behind its own
            // account's operations (its deadline spent on them), or the store answered within the deadline's length.
            let waited = tookTurn.instant.map { $0 - started > .milliseconds(20) } ?? true
            if bulkheads != nil, shared.unreachableSince == nil, waited || shared.answered(since: ContinuousClock.now - operationTimeout) {
                throw RelayError.storeRefused("no answer from \(configuration) within \(operationTimeout) for this operation")
            }
            // The last problem the store itself showed, if any, beside it; never kept as the problem
            // (each deadline would then nest the one before).
            let why = "no answer from \(configuration) within \(operationTimeout)" + (shared.lastProblem.map { " (\($0))" } ?? "")
            shared.timedOut()
            throw RelayError.unreachable(why)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            let failure = Self.relayError(error, configuration: configuration)
            if failure.isAnswer { shared.reached() } else { shared.failed(Self.reason(error)) }
            throw failure
        }
    }

    /// A PostgreSQL error as the relay tells it: `storeRefused` when the server
    /// answered this operation with an error of its own (a permission, a lock not
    /// granted in time, a Citus worker it could not reach), which says nothing of
    /// other operations; `unreachable` when the server could not be asked, or its
    /// answer says the whole server is in trouble (`serverWide`).
    package static func relayError(_ error: any Error, configuration: PostgresRelayConfiguration) -> RelayError {
        let why = PostgresRelayState.bounded("\(reason(error)) (\(configuration))")
        if let error = error as? PSQLError, error.code == .server, !serverWide(error.serverInfo?[.sqlState] ?? "") {
            return .storeRefused(why)
        }
        return .unreachable(why)
    }

    /// SQLSTATEs that speak for the whole server, not one statement: shutting down or starting
    /// up (57P), out of resources (53: disk, memory, connections), a system or internal error
    /// (58, XX), read-only after a failover (25006).
    static func serverWide(_ state: String) -> Bool {
        state.hasPrefix("57P") || state.hasPrefix("53") || state.hasPrefix("58") || state.hasPrefix("XX") || state == "25006"
    }

    /// Words for an error, never the password nor a query's values: the server's
    /// own message and SQLSTATE (not its detail, which can quote a row's values);
    /// postgres-nio's description says nothing ("Generic description…") and its
    /// debug description can carry a query's bindings.
    package static func reason(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] {
                // The code first, so a shortened line keeps it; one line, whatever the message holds.
                let oneLine = message.replacingOccurrences(of: "\n", with: " ")
                return (error.serverInfo?[.sqlState].map { "SQLSTATE \($0): " } ?? "") + "server said: \(oneLine)"
            }
            if let underlying = error.underlying { return "\(error.code): \(reason(underlying))" }
            return "\(error.code)"
        }
        if error is PostgresDecodingError { return "a row did not decode" }
        return String(describing: error)
    }

    package static func clientConfiguration(_ configuration: PostgresRelayConfiguration) throws -> PostgresClient.Configuration {
        var out: PostgresClient.Configuration
        if let socket = configuration.unixSocketPath {
            out = .init(unixSocketPath: socket, username: configuration.user, password: configuration.password, database: configuration.database)
        } else {
            let tls: PostgresClient.Configuration.TLS = switch configuration.tls {
            case .disable: .disable
            case .prefer: .prefer(unverifiedTLS)
            case .require: .require(unverifiedTLS)
            case .verifyFull: .require(.makeClientConfiguration())
            }
            out = .init(host: configuration.host, port: configuration.port, username: configuration.user,
                        password: configuration.password, database: configuration.database, tls: tls)
        }
        out.options.connectTimeout = .seconds(3)
        out.options.maximumConnections = 8
        out.options.additionalStartupParameters = [("application_name", "keyvaultd")] + serverTimeouts
        return out
    }

    static func connectionConfiguration(_ configuration: PostgresRelayConfiguration) throws -> PostgresConnection.Configuration {
        var out: PostgresConnection.Configuration
        if let socket = configuration.unixSocketPath {
            out = .init(unixSocketPath: socket, username: configuration.user, password: configuration.password, database: configuration.database)
        } else {
            let tls: PostgresConnection.Configuration.TLS = switch configuration.tls {
            case .disable: .disable
            case .prefer: .prefer(try NIOSSLContext(configuration: unverifiedTLS))
            case .require: .require(try NIOSSLContext(configuration: unverifiedTLS))
            case .verifyFull: .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
            }
            // No server name set here: postgres-nio sends the host as the TLS server name unless it is an
            // IP address, which SNI may not carry (set anyway, a listener to 127.0.0.1 over TLS never connected).
            out = .init(host: configuration.host, port: configuration.port, username: configuration.user,
                        password: configuration.password, database: configuration.database, tls: tls)
        }
        out.options.connectTimeout = .seconds(3)
        out.options.additionalStartupParameters = [("application_name", "keyvaultd-listen")]
        return out
    }

    /// The server gives up on its own before this side does (`operationTimeout`
    /// is 5 s): a statement, a lock wait or a transaction left idle by a caller
    /// that stopped waiting is cancelled there, so nothing commits behind its back.
    package static let serverTimeouts: [(String, String)] = [
        ("statement_timeout", "4000"), ("lock_timeout", "4000"), ("idle_in_transaction_session_timeout", "4000"),
    ]

    /// libpq's `prefer` and `require`: encrypted, the certificate not checked.
    private static var unverifiedTLS: TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateVerification = .none
        return tls
    }
}
