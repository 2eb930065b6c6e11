import Foundation
import KeyVaultProtocol
import KeyVaultRelay
import KeyVaultRelayStore

extension RelayServer {
    /// `keyvault-relay check-config`: everything a start reads before it listens, read the
    /// same way, and nothing changed (no table made, no file created, no address taken: a
    /// running relay may hold them). One line per thing checked; the first problem is
    /// thrown as the start would throw it (`StartError`, `RunError`, `SchemaRefusal`).
    package func check() async throws -> [String] {
        var report: [String] = []
        if let tls = configuration.tls {
            let certificate = try ServingCertificate(certificate: tls.certificate, key: tls.key)
            report.append("TLS: \(tls.certificate) with its key \(tls.key); the certificate expires \(certificate.expires.formatted(.iso8601))")
        } else {
            report.append("TLS: none (--plain-http)")
        }
        let proxies = try TrustedPeers(configuration.proxyProtocolFrom)
        if !proxies.isEmpty { report.append("PROXY protocol from: \(configuration.proxyProtocolFrom.joined(separator: ", "))") }
        let (_, keys) = try await loadIdentity()
        let count = await keys.kids.count
        report.append("identity: issuer \(configuration.issuer), audience \(configuration.audience), \(count) key\(count == 1 ? "" : "s") from \(configuration.jwks)")
        let address = try Self.storeAddress(configuration.store)
        let status: SchemaStatus
        do {
            status = try await address.schemaStatus(logger: logger)
        } catch let error as RelayError {
            throw RunError(description: StoreProblem.describe(error))
        }
        let missing = try status.toApply(under: configuration.migrate ? .migrate : .refuseBehind)
        let place = "store: \(Self.storeKind(address)) \(Self.storeLocation(address))"
        switch (missing.isEmpty, status.isEmpty) {
        case (true, _): report.append("\(place), schema current (\(status.known.last ?? "none"))")
        case (false, true): report.append("\(place), empty: the start makes its schema (\(missing.joined(separator: " ")))")
        case (false, false): report.append("\(place), behind: the start migrates it (--migrate: \(missing.joined(separator: " ")))")
        }
        return report
    }
}
