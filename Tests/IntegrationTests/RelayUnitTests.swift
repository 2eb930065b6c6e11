import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension SystemdUnitTests {
    /// `relay.env` as the relay unit's comment lists it, each value made this test's, and the
    /// store as the `store` credential; then the unit's `ExecReload=`, as `systemctl reload` runs it.
    @Test("keyvault-relay runs with the relay unit's settings (relay.env as its comment lists it, the store as a credential), and its ExecReload= reloads the TLS files")
    func relayUnitRunsAndReloads() async throws {
        let root = try RelaySettingsTests.folder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let unit = try String(contentsOfFile: Self.repository + "/dist/keyvault-relay.service", encoding: .utf8)
        let issuer = try await TestIssuer.make(in: root)
        let (_, certificate, key) = try await RelayServiceTLSTests.makeCertificates(in: root)
        let values = [
            "KEYVAULT_RELAY_LISTEN": "127.0.0.1:0", "KEYVAULT_RELAY_TLS_CERT": certificate, "KEYVAULT_RELAY_TLS_KEY": key,
            "KEYVAULT_RELAY_IDENTITY_ISSUER": TestIssuer.issuer, "KEYVAULT_RELAY_IDENTITY_AUDIENCE": TestIssuer.audience,
            "KEYVAULT_RELAY_IDENTITY_JWKS": issuer.jwksPath, "KEYVAULT_RELAY_LOG_FORMAT": "json",
        ]
        var environment = ["KEYVAULT_RELAY_METRICS_LISTEN": "127.0.0.1:0", "CREDENTIALS_DIRECTORY": root + "/credentials"]
        for line in unit.split(separator: "\n") where line.hasPrefix("#   KEYVAULT_RELAY_") {
            let name = String(line.dropFirst(4).prefix { $0 != "=" })
            let value: String = try #require(values[name], "the unit lists \(name), which this test does not give a value")
            environment[name] = value
        }
        #expect(environment["KEYVAULT_RELAY_TLS_CERT"] != nil && environment["KEYVAULT_RELAY_TLS_KEY"] != nil, "\(environment)")
        try FileManager.default.createDirectory(atPath: root + "/credentials", withIntermediateDirectories: true)
        try "sqlite:\(root)/relay.sqlite\n".write(toFile: root + "/credentials/store", atomically: true, encoding: .utf8)

        let checked = try await run(RelaySettingsTests.relayBinary, ["check-config"], environment: environment)
        #expect(checked.status == 0, "\(checked.err)")
        let relay = try await RelaySettingsTests.start([], environment: environment, root: root)
        defer { relay.remove() }
        let reload = try #require(unit.split(separator: "\n").first { $0.hasPrefix("ExecReload=") }?.dropFirst("ExecReload=".count))
        let command = reload.split(separator: " ").map { $0 == "$MAINPID" ? String(relay.process.pid) : String($0) }
        let reloaded = try await run(command[0], Array(command.dropFirst()))
        #expect(reloaded.status == 0, "\(reloaded.err)")
        try await eventually {
            try await relay.metric(#"keyvault_relay_reloads_total{file="tls_certificate",outcome="reloaded"}"#) == 1
        }
        #expect(await relay.stop() == 0)
    }
}
