import Foundation
import Testing
import KeyVaultProtocol
import KeyVaultRelayWire
#if canImport(Glibc)
import Glibc
#endif

/// keyvault-relay as an operator starts and stops it: what it logs, an address
/// already taken, a store that is away, and held reads when it stops.
@Suite("keyvault-relay's start and stop")
struct RelayLifecycleTests {
    static var relayBinary: String { DaemonProcess.binaryDirectory + "/keyvault-relay" }

    @Test("its log says at start its version, store kind and place, issuer and address, and at stop that it stops; never the store's credentials")
    func logsStartAndStop() async throws {
        let root = try RelaySettingsTests.folder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let issuer = try await TestIssuer.make(in: root)
        let relay = try await RelaySettingsTests.start(["--store", "sqlite:" + root + "/relay.sqlite", "--listen", "127.0.0.1:0", "--plain-http",
                                                        "--log-format", "json"] + issuer.relayArguments, environment: [:], root: root)
        defer { relay.remove() }
        #expect(await relay.stop() == 0)
        let lines = try DaemonOptionsTests.jsonLines(try String(contentsOfFile: relay.logPath, encoding: .utf8))
        let started = try #require(lines.first { $0["message"] == "keyvault-relay starting" }, "\(lines)")
        #expect(started["version"] == KeyVaultVersion.string)
        #expect(started["store"] == "sqlite")
        #expect(started["storeAt"] == root + "/relay.sqlite")
        #expect(started["issuer"] == TestIssuer.issuer)
        #expect(lines.contains { $0["message"] == "listening" && $0["address"] == "127.0.0.1:\(relay.port)" }, "\(lines)")
        #expect(lines.contains { $0["message"] == "keyvault-relay stopping" }, "\(lines)")
        #expect(lines.last?["message"] == "keyvault-relay stopped", "\(lines)")
    }

    @Test("an address already taken is named, with its port, and why")
    func takenAddress() async throws {
        let root = try RelaySettingsTests.folder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let issuer = try await TestIssuer.make(in: root)
        let common = ["--store", "sqlite:" + root + "/relay.sqlite", "--plain-http"] + issuer.relayArguments
        let first = try await RelaySettingsTests.start(common + ["--listen", "127.0.0.1:0"], environment: [:], root: root)
        defer { first.remove() }
        let second = try await run(Self.relayBinary, common + ["--listen", "127.0.0.1:\(first.port)"])
        #expect(second.status == 1, "\(second.err)")
        #expect(second.err.contains("keyvault-relay cannot listen on 127.0.0.1:\(first.port): another process listens there"), "\(second.err)")
        #expect(!second.err.contains("bind(descriptor"), "\(second.err)")
        // The metrics listener's address, likewise.
        let metrics = try await run(Self.relayBinary, common + ["--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:\(first.port)"])
        #expect(metrics.status == 1, "\(metrics.err)")
        #expect(metrics.err.contains("the metrics listener cannot listen on 127.0.0.1:\(first.port)"), "\(metrics.err)")
        #expect(await first.stop() == 0)
    }

    @Test("a store it cannot reach at start is called the store, not the relay, and named without its password")
    func storeAway() async throws {
        let root = try RelaySettingsTests.folder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let issuer = try await TestIssuer.make(in: root)
        // Nothing listens on port 1.
        let away = try await run(Self.relayBinary, ["--store", "postgres://keyvault:hunter2@127.0.0.1:1/kv", "--listen", "127.0.0.1:0",
                                                    "--plain-http"] + issuer.relayArguments)
        #expect(away.status == 1, "\(away.err)")
        #expect(away.err.contains("the store is unreachable"), "\(away.err)")
        #expect(!away.err.contains("the relay is unreachable"), "\(away.err)")
        #expect(!(away.out + away.err).contains("hunter2"))
    }

    @Test("SIGTERM answers held reads at once, empty, and the relay stops promptly")
    func heldReadsAnsweredAtStop() async throws {
        try await RelayServiceFixture.with(.sqlite, arguments: ["--metrics-listen", "127.0.0.1:0"]) { f in
            let (device, _) = try await f.createAccount("held")
            let after = try #require(try await f.a.rows("held", as: device).last).cursor
            let reads = (0..<3).map { _ in Task { try await f.a.read("held", after: after, wait: 60, as: device) } }
            // Held: nothing is answered while there is nothing to read.
            try await eventually { try await f.a.metric("keyvault_relay_held_reads") == 3 }
            let stopping = ContinuousClock.now
            f.a.process.signal(SIGTERM)
            for read in reads {
                let answer = try await read.value
                #expect(answer.status == 200, "\(answer.text)")
                #expect(try answer.json(RelayWire.Rows.self).rows.isEmpty, "\(answer.text)")
            }
            #expect(ContinuousClock.now - stopping < .seconds(2), "held reads were answered only after \(ContinuousClock.now - stopping)")
            #expect(await f.a.process.wait() == 0)
            #expect(ContinuousClock.now - stopping < .seconds(3), "the relay took \(ContinuousClock.now - stopping) to stop")
        }
    }

    @Test("over TLS, with daemons holding reads: SIGTERM answers them and the relay stops promptly, not after TLS's 5 s wait for each peer's goodbye")
    func stopsPromptlyOverTLS() async throws {
        let root = try RelaySettingsTests.folder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let (ca, certificate, key) = try await RelayServiceTLSTests.makeCertificates(in: root)
        let issuer = try await TestIssuer.make(in: root)
        let relay = try await RelayServiceProcess.start(store: "sqlite:" + root + "/relay.sqlite", issuer: issuer, root: root, name: "tls",
                                                        tls: (certificate, key), arguments: ["--log-format", "json", "--metrics-listen", "127.0.0.1:0"])
        defer { relay.remove() }
        var daemons: [DaemonProcess] = []
        defer { daemons.forEach { $0.remove() } }
        for index in 0..<2 {
            let daemon = try DaemonProcess()
            daemon.relays = ["https://127.0.0.1:\(relay.port)"]
            daemon.identityIssuer = issuer
            try await daemon.start(extraArguments: ["--relay-ca", ca])
            daemons.append(daemon)
            let made = try await daemon.request("POST", "/v1/accounts", json: ["user": "tls\(index)", "passphrase": "pw"])
            #expect(made.status == 200, "\(made.raw.text)")
        }
        // Each daemon holds a read of its account on the relay.
        try await eventually { try await relay.metric("keyvault_relay_held_reads") ?? 0 >= 2 }
        let stopping = ContinuousClock.now
        relay.process.signal(SIGTERM)
        #expect(await relay.process.wait() == 0)
        #expect(ContinuousClock.now - stopping < .seconds(2), "the relay took \(ContinuousClock.now - stopping) to stop")
        let lines = try DaemonOptionsTests.jsonLines(try String(contentsOfFile: relay.logPath, encoding: .utf8))
        let stopped = try #require(lines.first { $0["message"] == "keyvault-relay stopping" }, "\(lines.suffix(5))")
        #expect(Int(stopped["heldReadsAnswered"] ?? "") ?? 0 >= 1, "\(stopped)")
    }
}
