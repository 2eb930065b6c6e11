// swift-tools-version:6.0
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "keyvaultd",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "keyvaultd", targets: ["keyvaultd"]),
        .executable(name: "keyvault", targets: ["keyvault"]),
        .executable(name: "keyvault-relay", targets: ["keyvault-relay"]),
        // What an app's sync engine links: the socket API's client, and nothing of the daemon.
        .library(name: "KeyVaultClient", targets: ["KeyVaultClient"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.7.1"),
        .package(url: "https://github.com/apple/swift-http-structured-headers.git", from: "1.7.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        // Already in the graph under jwt-kit; the example sync engine seals its records with it, as an app would.
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        // Already in the graph under SwiftNIO; its Heap holds the waits' deadlines.
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.6.0"),
        // Operators' metrics: one Prometheus registry per relay server and per daemon, never the global one.
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
    ],
    targets: [
        // The C libraries, reached only through KeyVaultCrypto.
        .systemLibrary(name: "CSodium", providers: [.apt(["libsodium-dev"])]),
        .systemLibrary(name: "COpenSSL", providers: [.apt(["libssl-dev"])]),
        // prctl and setrlimit, for a process that never dumps core.
        .systemLibrary(name: "CLinux"),
        // The only code that touches libsodium and OpenSSL: keys as sized types, secrets in locked memory.
        .target(name: "KeyVaultCrypto", dependencies: ["CSodium", "COpenSSL"], swiftSettings: strict),
        // The protocol: records, encodings, the circle log and the account's state machines.
        // Pure values and no I/O; the daemon and (next) the relay server both stand on it.
        // Device and key IDs (`ID16`), account IDs, durations as people write them and the version, with no
        // dependency: the protocol, the client library and the CLI share them (the CLI links no crypto library).
        .target(name: "KeyVaultIDs", swiftSettings: strict),
        // A Unix socket connected and its peer checked (SO_PEERCRED), where the daemon's socket is by default,
        // and whole writes to a descriptor: what the daemon, its client library and the CLI share, with no dependency.
        .target(name: "KeyVaultUnixSocket", swiftSettings: strict),
        // NIO buffers zeroed when released, for answers that carry a key: the daemon writes them, the
        // client library reads them. NIOCore only (no libsodium, which the client library does not link).
        .target(name: "KeyVaultWipedBuffers", dependencies: [.product(name: "NIOCore", package: "swift-nio")], swiftSettings: strict),
        .target(name: "KeyVaultProtocol", dependencies: ["KeyVaultIDs", "KeyVaultCrypto"], swiftSettings: strict),
        // The account kernel: each account's state as a pure value (its phase, its lock, the work it owes),
        // the machines that step it, and what a key read answers and whether it waits. No I/O.
        // The relay service's HTTP wire (RELAY.md): its JSON bodies and request signatures, shared by the
        // daemon's client and the service. The protocol itself says nothing of HTTP.
        .target(name: "KeyVaultRelayWire", dependencies: ["KeyVaultProtocol", "KeyVaultCrypto"], swiftSettings: strict),
        .target(name: "KeyVaultAccount", dependencies: ["KeyVaultProtocol", "KeyVaultCrypto"], swiftSettings: strict),
        // A SQLite file more than one process opens: WAL switched once, migrations that race, links refused.
        .target(name: "KeyVaultSQLite", dependencies: ["KeyVaultIDs", "KeyVaultProtocol", .product(name: "GRDB", package: "GRDB.swift")], swiftSettings: strict),
        // The daemon's vault: accounts, wrapped items, the circle log and owed work, in one SQLite file.
        .target(
            name: "KeyVaultVault",
            dependencies: ["KeyVaultIDs", "KeyVaultAccount", "KeyVaultProtocol", "KeyVaultCrypto", "KeyVaultSQLite", .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: strict
        ),
        // The relay as both sides see it: the `Relay` interface, addresses, and the embedded SQLite relay file.
        .target(
            name: "KeyVaultRelay",
            dependencies: [
                "KeyVaultProtocol", "KeyVaultRelayWire", "KeyVaultCrypto",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // The embedded relay file (SQLiteRelay, watched for writes and replacement), and the
        // relay service's SQLite store's nonces: the relay interface's SQLite side.
        .target(
            name: "KeyVaultRelaySQLite",
            dependencies: [
                "KeyVaultRelay", "KeyVaultProtocol", "KeyVaultCrypto", "KeyVaultSQLite",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // The daemon's client of the relay service: signed HTTPS requests.
        .target(
            name: "KeyVaultRelayClient",
            dependencies: [
                "KeyVaultRelay", "KeyVaultProtocol", "KeyVaultRelayWire", "KeyVaultCrypto",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            swiftSettings: strict
        ),
        // The relay service's store on PostgreSQL (and what a store adds to a relay: retention, a ping).
        .target(
            name: "KeyVaultRelayStore",
            dependencies: [
                "KeyVaultRelay", "KeyVaultRelaySQLite", "KeyVaultSQLite", "KeyVaultProtocol", "KeyVaultCrypto",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            swiftSettings: strict
        ),
        // Who may do what over the socket, and the daemon's settings: the policy folder's TOML.
        .target(
            name: "KeyVaultPolicy",
            dependencies: ["KeyVaultProtocol", "KeyVaultCrypto", "KeyVaultAccount"],
            swiftSettings: strict
        ),
        // The engine: the account owners, their jobs, propagation and publishing. No HTTP, no event
        // loop: it stands on the account machine, the vault and the relay interface.
        .target(
            name: "KeyVaultEngine",
            dependencies: [
                "KeyVaultIDs", "KeyVaultAccount", "KeyVaultPolicy", "KeyVaultVault", "KeyVaultRelay", "KeyVaultProtocol", "KeyVaultCrypto",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "HeapModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        // The daemon: the socket API (Hummingbird over the Unix socket) and the process.
        .target(
            name: "KeyVault",
            dependencies: [
                "KeyVaultIDs", "KeyVaultAccount", "KeyVaultPolicy", "KeyVaultEngine", "KeyVaultVault", "KeyVaultRelay", "KeyVaultRelaySQLite", "KeyVaultRelayClient", "KeyVaultProtocol", "KeyVaultCrypto", "KeyVaultUnixSocket", "KeyVaultWipedBuffers", "CLinux",
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        // The relay service: signed requests, identity tokens, who may do what, push.
        // Stands on the protocol and the relay stores; nothing of the daemon.
        .target(
            name: "KeyVaultRelayService",
            dependencies: [
                "KeyVaultProtocol", "KeyVaultRelayWire", "KeyVaultCrypto", "KeyVaultRelay", "KeyVaultRelaySQLite", "KeyVaultRelayStore", "KeyVaultSQLite",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "RawStructuredFieldValues", package: "swift-http-structured-headers"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        // The log lines of both executables: --log-level, and --log-format text or json.
        .target(name: "KeyVaultLogging", dependencies: [.product(name: "Logging", package: "swift-log")], swiftSettings: strict),
        .executableTarget(
            name: "keyvault-relay",
            dependencies: [
                "KeyVaultRelayService", "KeyVaultProtocol", "KeyVaultLogging",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // The client library apps link (docs/CLIENT.md): HTTP/1.1 on SwiftNIO over the Unix socket,
        // on connections kept between requests and each checked once (the socket's path, then its
        // peer), typed answers, resumable events. Nothing of the daemon.
        .target(
            name: "KeyVaultClient",
            dependencies: [
                "KeyVaultIDs", "KeyVaultUnixSocket", "KeyVaultWipedBuffers",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "keyvaultd",
            dependencies: [
                "KeyVault", "KeyVaultEngine", "KeyVaultPolicy", "KeyVaultUnixSocket", "KeyVaultLogging",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "keyvault",
            dependencies: [
                "KeyVaultClient", "KeyVaultIDs", "KeyVaultUnixSocket",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "keyvault-bench",
            dependencies: [
                "KeyVault", "KeyVaultEngine", "KeyVaultPolicy", "KeyVaultAccount", "KeyVaultClient", "KeyVaultVault", "KeyVaultRelay", "KeyVaultRelaySQLite", "KeyVaultRelayClient", "KeyVaultRelayStore", "KeyVaultProtocol", "KeyVaultRelayWire", "KeyVaultCrypto", "KeyVaultTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            path: "bench",
            swiftSettings: strict
        ),
        // An app's sync engine, as small as it can be (examples/SyncEngine): run by a test against real daemons.
        .executableTarget(
            name: "example-sync-engine",
            dependencies: ["KeyVaultClient", .product(name: "Crypto", package: "swift-crypto")],
            path: "examples/SyncEngine",
            swiftSettings: strict
        ),
        // A local OpenID Connect issuer for the tests and the bench, and a raw one-connection HTTP
        // client for what must be said on one connection (never linked by what ships).
        .target(
            name: "KeyVaultTestSupport",
            dependencies: [
                "KeyVaultClient", "KeyVaultUnixSocket",
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "KeyVaultTests",
            dependencies: ["KeyVault", "KeyVaultEngine", "KeyVaultPolicy", "KeyVaultIDs", "KeyVaultAccount", "KeyVaultVault", "KeyVaultRelay", "KeyVaultRelaySQLite", "KeyVaultSQLite", "KeyVaultRelayClient", "KeyVaultRelayStore", "KeyVaultProtocol", "KeyVaultRelayWire", "KeyVaultCrypto", "KeyVaultRelayService", "KeyVaultWipedBuffers",
                           .product(name: "GRDB", package: "GRDB.swift"),
                           .product(name: "Logging", package: "swift-log"),
                           .product(name: "NIOHTTP1", package: "swift-nio"),
                           .product(name: "NIOCore", package: "swift-nio"),
                           .product(name: "NIOEmbedded", package: "swift-nio")],
            resources: [.copy("vectors")],
            swiftSettings: strict
        ),
        .testTarget(
            name: "IntegrationTests",
            dependencies: ["KeyVault", "KeyVaultEngine", "KeyVaultPolicy", "KeyVaultIDs", "KeyVaultAccount", "KeyVaultVault", "KeyVaultRelay", "KeyVaultRelaySQLite", "KeyVaultSQLite", "KeyVaultRelayClient", "KeyVaultRelayStore", "KeyVaultProtocol", "KeyVaultRelayWire", "KeyVaultCrypto", "KeyVaultClient", "keyvaultd", "keyvault",
                           "KeyVaultTestSupport", "KeyVaultWipedBuffers", "keyvault-relay", "example-sync-engine",
                           .product(name: "AsyncHTTPClient", package: "async-http-client"),
                           .product(name: "JWTKit", package: "jwt-kit"),
                           .product(name: "NIOCore", package: "swift-nio"),
                           .product(name: "NIOHTTP1", package: "swift-nio")],
            swiftSettings: strict
        ),
    ]
)
