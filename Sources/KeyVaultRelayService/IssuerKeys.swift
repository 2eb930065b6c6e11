import AsyncHTTPClient
import Foundation
import JWTKit
import Logging
import NIOCore

/// The issuer's signing keys: a JWKS read from a file once, or fetched from a
/// URL at start and again when a token names a key ID the set lacks (at most
/// once a minute, so junk key IDs cannot make the relay hammer the issuer).
actor IssuerKeys {
    enum Source: Sendable, Equatable {
        case file(String)
        case url(String)

        init(_ text: String) throws {
            guard text.contains("://") else {
                self = .file(text)
                return
            }
            guard let url = URLComponents(string: text), let host = url.host, !host.isEmpty else {
                throw RelayServer.StartError(description: "--identity-jwks: \(text) is not a URL")
            }
            // A key set over plain HTTP is anyone's on the path: only from this machine.
            guard url.scheme == "https" || (url.scheme == "http" && ["127.0.0.1", "::1", "localhost"].contains(host)) else {
                throw RelayServer.StartError(description: "--identity-jwks: fetch the key set over https:// (http:// only from this machine)")
            }
            self = .url(text)
        }
    }

    static let refetchInterval: Duration = .seconds(60)
    static let maxDocument = 1 << 20

    let source: Source
    private(set) var keys: JWTKeyCollection
    private var lastFetch: ContinuousClock.Instant
    private let logger: Logger

    /// Reads or fetches the set; throws a `StartError` saying what is wrong with it.
    init(_ source: Source, logger: Logger) async throws {
        self.source = source
        self.logger = logger
        keys = try await Self.load(source)
        lastFetch = .now
    }

    /// Fetches the set again if it comes from a URL and was not fetched within the minute.
    /// Returns whether the keys changed hands (a new collection to try).
    func refresh() async -> Bool {
        guard case .url = source, ContinuousClock.now - lastFetch >= Self.refetchInterval else { return false }
        lastFetch = .now
        do {
            keys = try await Self.load(source)
            return true
        } catch {
            logger.warning("the identity key set could not be fetched again; the old one stays", metadata: ["why": "\(error)"])
            return false
        }
    }

    private static func load(_ source: Source) async throws -> JWTKeyCollection {
        let text: String
        switch source {
        case .file(let path):
            guard let read = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw RelayServer.StartError(description: "--identity-jwks: cannot read \(path)")
            }
            text = read
        case .url(let url):
            text = try await fetch(url)
        }
        do {
            let keys = JWTKeyCollection()
            try await keys.add(jwksJSON: text)
            return keys
        } catch {
            throw RelayServer.StartError(description: "--identity-jwks: not a JSON Web Key Set this relay can use (\(error))")
        }
    }

    private static func fetch(_ url: String) async throws -> String {
        do {
            let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: url), timeout: .seconds(10))
            guard response.status.code == 200 else {
                throw RelayServer.StartError(description: "--identity-jwks: \(url) answered \(response.status.code)")
            }
            let body = try await response.body.collect(upTo: maxDocument)
            return String(buffer: body)
        } catch let error as RelayServer.StartError {
            throw error
        } catch {
            throw RelayServer.StartError(description: "--identity-jwks: cannot fetch \(url) (\(error))")
        }
    }
}
