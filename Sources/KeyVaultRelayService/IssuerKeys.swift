import AsyncHTTPClient
import Foundation
import JWTKit
import KeyVaultRelay
import Logging
import NIOCore

/// The issuer's signing keys: a JWKS read from a file once, or fetched from a
/// URL at start and again when a token names a key ID the set lacks (at most
/// once a minute, so junk key IDs cannot make the relay hammer the issuer).
///
/// The key IDs the set holds are kept beside it: JWTKit, asked for a key ID it
/// lacks, or for none, verifies with its default key instead, which would hide
/// a rotation (no refetch) and accept a token that names no key.
///
/// Each key has exactly one algorithm, fixed when the set is read, from its key
/// type (and its `alg` where given) within RELAY.md's allow-list: an RSA key is
/// RS256, a P-256 key ES256; a key whose `alg` is anything else, or of another
/// type or curve, is not loaded. A token's header never chooses it (JWTKit, given
/// a key without `alg`, would build the verifier from the first token's header and
/// keep it for every token after), and nothing a token says changes the set.
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
            guard url.portIsValid else {
                throw RelayServer.StartError(description: "--identity-jwks: the port is a number from 1 to 65535")
            }
            // A key set over plain HTTP is anyone's on the path: only from this machine.
            guard url.scheme == "https" || (url.scheme == "http" && ["127.0.0.1", "::1", "localhost"].contains(host)) else {
                throw RelayServer.StartError(description: "--identity-jwks: fetch the key set over https:// (http:// only from this machine)")
            }
            self = .url(text)
        }
    }

    static let defaultRefetchInterval: Duration = .seconds(60)
    static let maxDocument = 1 << 20

    let source: Source
    let refetchInterval: Duration
    private(set) var keys: JWTKeyCollection
    /// The key IDs in `keys`, each with the one algorithm its key verifies.
    private(set) var kids: [String: String]
    private var lastFetch: ContinuousClock.Instant
    private let logger: Logger

    /// Reads or fetches the set; throws a `StartError` saying what is wrong with it (an empty set included).
    init(_ source: Source, refetchInterval: Duration = defaultRefetchInterval, logger: Logger) async throws {
        self.source = source
        self.refetchInterval = refetchInterval
        self.logger = logger
        (keys, kids) = try await Self.load(source)
        lastFetch = .now
    }

    /// The keys to verify a token naming `kid` with, fetching the set again first if
    /// it comes from a URL, lacks that key, and was not fetched within the interval;
    /// nil if the set (still) lacks it.
    func keys(for kid: String) async -> (keys: JWTKeyCollection, algorithm: String)? {
        if let algorithm = kids[kid] { return (keys, algorithm) }
        guard case .url = source, ContinuousClock.now - lastFetch >= refetchInterval else { return nil }
        lastFetch = .now
        do {
            (keys, kids) = try await Self.load(source)
            logger.notice("the identity key set was fetched again for a key it lacked", metadata: ["keys": "\(kids.count)"])
        } catch {
            logger.warning("the identity key set could not be fetched again; the old one stays", metadata: ["why": "\(error)"])
        }
        return kids[kid].map { (keys, $0) }
    }

    /// SIGHUP: the set read (or fetched) again, whatever the refetch interval, and how many keys it
    /// holds. A set that cannot be read or used throws (a `StartError` saying why) and the one in
    /// force stays; tokens being checked meanwhile use whichever set they found.
    func reload() async throws -> Int {
        let (keys, kids) = try await Self.load(source)
        (self.keys, self.kids) = (keys, kids)
        lastFetch = .now
        return kids.count
    }

    /// The one algorithm `jwk` verifies with, or nil when the relay does not take it.
    static func pinnedAlgorithm(_ jwk: JWK) -> JWK.Algorithm? {
        let algorithm: JWK.Algorithm
        switch jwk.keyType.rawValue {
        case JWK.KeyType.rsa.rawValue: algorithm = .rs256
        case JWK.KeyType.ecdsa.rawValue where jwk.curve == .ecdsa(.p256): algorithm = .es256
        default: return nil
        }
        if let given = jwk.algorithm, given != algorithm { return nil }
        return algorithm
    }

    private static func load(_ source: Source) async throws -> (JWTKeyCollection, [String: String]) {
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
        let keys = JWTKeyCollection()
        var kids: [String: String] = [:]
        do {
            let set = try JSONDecoder().decode(JWKS.self, from: Data(text.utf8))
            for var jwk in set.keys {
                // A key with no ID is never named by a token; one the allow-list lacks is never used.
                guard let kid = jwk.keyIdentifier?.string, !kid.isEmpty, let algorithm = pinnedAlgorithm(jwk) else { continue }
                // Given its algorithm, JWTKit builds the key's verifier now, once, and never from a header.
                jwk.algorithm = algorithm
                try await keys.add(jwk: jwk)
                kids[kid] = algorithm.rawValue
            }
        } catch {
            throw RelayServer.StartError(description: "--identity-jwks: not a JSON Web Key Set this relay can use (\(error))")
        }
        guard !kids.isEmpty else {
            throw RelayServer.StartError(description: "--identity-jwks: the key set holds no RS256 or ES256 key with a key ID (kid); tokens name the key they are signed with")
        }
        return (keys, kids)
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
