import Foundation

/// One option of keyvault-relay and the names it has in the other places a setting may come
/// from: `--tls-key`, `KEYVAULT_RELAY_TLS_KEY`, the credential `tls-key`. No error shows a
/// setting's value, only where it came from: the store's may hold its password.
struct RelaySetting: Sendable {
    /// The long flag without its dashes.
    let option: String
    /// The option names a file (a certificate, a key, a key set): its credential is that file, not a value in it.
    let namesFile: Bool

    var flag: String { "--" + option }
    var variable: String { "KEYVAULT_RELAY_" + option.uppercased().replacingOccurrences(of: "-", with: "_") }
    var credential: String { option }

    private init(_ option: String, namesFile: Bool = false) {
        self.option = option
        self.namesFile = namesFile
    }

    static let store = RelaySetting("store")
    static let listen = RelaySetting("listen")
    static let tlsCert = RelaySetting("tls-cert", namesFile: true)
    static let tlsKey = RelaySetting("tls-key", namesFile: true)
    static let plainHTTP = RelaySetting("plain-http")
    static let migrate = RelaySetting("migrate")
    static let identityIssuer = RelaySetting("identity-issuer")
    static let identityAudience = RelaySetting("identity-audience")
    static let identityJWKS = RelaySetting("identity-jwks", namesFile: true)
    static let identityJWKSRefetch = RelaySetting("identity-jwks-refetch")
    static let requestTimeout = RelaySetting("request-timeout")
    static let metricsListen = RelaySetting("metrics-listen")
    static let proxyProtocolFrom = RelaySetting("proxy-protocol-from")
    static let logLevel = RelaySetting("log-level")
    static let logFormat = RelaySetting("log-format")
}
