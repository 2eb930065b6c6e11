import ArgumentParser
import KeyVaultLogging

/// The relay's settings once flags, environment and credentials are merged and checked.
struct RelaySettings {
    var store: String
    var host: String
    var port: Int
    /// The certificate chain and key files; nil with `--plain-http`.
    var tls: (certificate: String, key: String)?
    var identityIssuer: String
    var identityAudience: String
    var identityJWKS: String
    var identityJWKSRefetch: Int
    var requestTimeout: Int
    /// Where Prometheus metrics are served; nil: nowhere.
    var metricsListen: (host: String, port: Int)?
    /// CIDR blocks of trusted proxies sending PROXY protocol version 2; empty: none.
    var proxyProtocolFrom: [String]
    /// A store behind this build's schema is migrated at start, not refused.
    var migrate: Bool
    var logs: LogSettings
}

extension KeyvaultRelay {
    /// Each setting from its flag, variable or credential; a required one missing everywhere, or
    /// one out of its range, is a usage error naming where it came from (never a secret's value).
    func settings(from sources: SettingSources) throws -> RelaySettings {
        func needed(_ setting: RelaySetting, _ flag: String?) throws -> SettingSources.Value {
            try Self.needed(setting, flag, sources)
        }
        func seconds(_ setting: RelaySetting, _ flag: String?, default fallback: Int, range: ClosedRange<Int>) throws -> Int {
            guard let value = try sources.value(of: setting, flag: flag) else { return fallback }
            guard let number = Int(value.text), range.contains(number) else {
                throw ValidationError("\(value.origin) takes \(range.lowerBound) to \(range.upperBound) seconds")
            }
            return number
        }

        let logs = try logSettings(from: sources)
        let store = try needed(.store, self.store)
        let listen = try needed(.listen, self.listen)
        let (host, port) = try Self.hostAndPort(listen)
        let plain = try sources.isOn(.plainHTTP, flag: plainHTTP)
        let certificateFile = try sources.value(of: .tlsCert, flag: tlsCert)
        let keyFile = try sources.value(of: .tlsKey, flag: tlsKey)
        let tls: (certificate: String, key: String)?
        switch (plain, certificateFile, keyFile) {
        case (true, nil, nil): tls = nil
        case (false, .some(let chain), .some(let key)): tls = (chain.text, key.text)
        case (true, _, _): throw ValidationError("--plain-http and --tls-cert/--tls-key exclude each other")
        case (false, _, _): throw ValidationError("give both --tls-cert and --tls-key, or --plain-http")
        }
        return RelaySettings(
            store: store.text, host: host, port: port, tls: tls,
            identityIssuer: try needed(.identityIssuer, identityIssuer).text,
            identityAudience: try needed(.identityAudience, identityAudience).text,
            identityJWKS: try needed(.identityJWKS, identityJWKS).text,
            identityJWKSRefetch: try seconds(.identityJWKSRefetch, identityJWKSRefetch, default: 60, range: 1...3600),
            requestTimeout: try seconds(.requestTimeout, requestTimeout, default: 10, range: 1...300),
            metricsListen: try sources.value(of: .metricsListen, flag: metricsListen).map(Self.hostAndPort),
            // Repeated, or one value of blocks separated by commas or spaces (the variable, the credential).
            proxyProtocolFrom: try (proxyProtocolFrom.isEmpty ? sources.value(of: .proxyProtocolFrom, flag: nil).map { [$0.text] } ?? []
                                                             : proxyProtocolFrom)
                .flatMap { $0.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\n" }).map(String.init) },
            migrate: try sources.isOn(.migrate, flag: migrate),
            logs: logs)
    }

    /// What `keyvault-relay migrate` needs: the store alone.
    func storeSetting(from sources: SettingSources) throws -> String {
        try Self.needed(.store, store, sources).text
    }

    func logSettings(from sources: SettingSources) throws -> LogSettings {
        let levelName = try sources.value(of: .logLevel, flag: logLevel)
        let formatName = try sources.value(of: .logFormat, flag: logFormat)
        do {
            return try LogSettings(level: levelName?.text ?? "info", format: formatName?.text ?? "text",
                                   levelOption: levelName?.origin ?? "--log-level", formatOption: formatName?.origin ?? "--log-format")
        } catch {
            throw ValidationError(error.description)
        }
    }

    private static func needed(_ setting: RelaySetting, _ flag: String?, _ sources: SettingSources) throws -> SettingSources.Value {
        guard let value = try sources.value(of: setting, flag: flag) else {
            throw ValidationError("missing \(setting.flag): give it, or \(setting.variable), or the credential '\(setting.credential)'")
        }
        return value
    }

    private static func hostAndPort(_ listen: SettingSources.Value) throws -> (String, Int) {
        let text = listen.text
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else {
            throw ValidationError("\(listen.origin) takes HOST:PORT")
        }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return (host, port)
    }
}
