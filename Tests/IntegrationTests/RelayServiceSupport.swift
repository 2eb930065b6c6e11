import AsyncHTTPClient
import Foundation
import KeyVaultTestSupport
import NIOCore
import NIOHTTP1
import Testing
import KeyVaultCrypto
import KeyVaultProtocol
#if canImport(Glibc)
import Glibc
#endif

extension TestIdentityIssuer {
    /// A token for `account` bound to `device`'s keys unless `nonce` says otherwise.
    func token(for account: String, device: TestDevice, issuer: String = TestIdentityIssuer.issuer,
               audience: String = TestIdentityIssuer.audience, expiresIn: TimeInterval = 600, nonce: String? = nil,
               wronglySigned: Bool = false) async throws -> String {
        try await token(account: account, nonce: nonce ?? device.identityNonce, issuer: issuer, audience: audience,
                        expiresIn: expiresIn, wronglySigned: wronglySigned)
    }
}

/// A device of the tests: its keys, and signed requests made with them.
struct TestDevice: Sendable {
    let signing: SigningKey
    let box: BoxSecretKey
    let keys: DeviceKeys
    var id: String { keys.deviceID }
    var identityNonce: String { IdentityNonce.of(signing: keys.signing, box: keys.box) }

    init(name: String = "device") {
        signing = SigningKey.generate()
        box = BoxSecretKey.generate()
        keys = DeviceKeys(signing: signing.publicKey, box: box.publicKey, name: name)
    }

    /// The request's headers: Content-Digest, Signature-Input and Signature, signed now unless told otherwise.
    func signedHeaders(method: String, path: String, query: String, body: [UInt8],
                       created: Int64 = Int64(Date().timeIntervalSince1970), nonce: String = RequestSignature.randomNonce()) -> [(String, String)] {
        let signature = RequestSignature(method: method, path: path, query: query, body: body, created: created, nonce: nonce, keyID: id)
        return [("Content-Digest", signature.contentDigest), ("Signature-Input", signature.signatureInputHeader),
                ("Signature", signature.signatureHeader(signedBy: signing))]
    }
}

/// One HTTP answer: status and body.
struct Answer: Sendable {
    let status: Int
    let body: [UInt8]
    var retryAfter: String? = nil
    var text: String { String(decoding: body, as: UTF8.self) }
    func json<T: Decodable>(_ type: T.Type) throws -> T { try JSONDecoder().decode(type, from: Data(body)) }
    var refusal: RelayWire.Refusal? { try? json(RelayWire.Refusal.self) }
}

/// A device's calls to a `keyvault-relay` instance.
extension RelayServiceProcess {
    /// Sends a request signed by `device` (or unsigned), with headers added or replaced after signing.
    func send(_ method: String, _ path: String, query: String = "", body: [UInt8] = [], as device: TestDevice?,
              headers extra: [(String, String)] = [], signed: [(String, String)]? = nil, timeout: TimeAmount = .seconds(70)) async throws -> Answer {
        var request = HTTPClientRequest(url: url + path + (query.isEmpty ? "" : "?" + query))
        request.method = HTTPMethod(rawValue: method)
        let signedHeaders = signed ?? device?.signedHeaders(method: method, path: path, query: query, body: body) ?? []
        for (name, value) in signedHeaders { request.headers.replaceOrAdd(name: name, value: value) }
        for (name, value) in extra { request.headers.replaceOrAdd(name: name, value: value) }
        if !body.isEmpty {
            request.headers.replaceOrAdd(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: timeout)
        let collected = try await response.body.collect(upTo: 16 << 20)
        return Answer(status: Int(response.status.code), body: Array(collected.readableBytesView),
                      retryAfter: response.headers.first(name: "Retry-After"))
    }

    // The relay's routes, as a device calls them.

    func candidacy(_ account: String, _ device: TestDevice, token: String) async throws -> Answer {
        let body = JSONBody.encode(RelayWire.Candidacy(signing: device.keys.signing, box: device.keys.box, identityToken: token))
        return try await send("POST", "/v1/accounts/\(account)/candidates", body: body, as: device)
    }

    func publish(_ account: String, _ records: [RelayRecord], as device: TestDevice) async throws -> Answer {
        let body = JSONBody.encode(RelayWire.Publish(records: records.map(RelayWire.Record.init)))
        return try await send("POST", "/v1/accounts/\(account)/records", body: body, as: device)
    }

    func read(_ account: String, after: Int64 = 0, wait: Int? = nil, as device: TestDevice) async throws -> Answer {
        let query = "after=\(after)&limit=1000" + (wait.map { "&wait=\($0)" } ?? "")
        return try await send("GET", "/v1/accounts/\(account)/records", query: query, as: device)
    }

    /// The rows, or a failure saying what answered instead.
    func rows(_ account: String, after: Int64 = 0, wait: Int? = nil, as device: TestDevice) async throws -> [RelayRow] {
        let answer = try await read(account, after: after, wait: wait, as: device)
        guard answer.status == 200 else { throw TestFailure("read \(account): \(answer.status) \(answer.text)") }
        let account = try AccountID(validating: account)
        return try answer.json(RelayWire.Rows.self).rows.compactMap { $0.row(account: account) }
    }
}

enum JSONBody {
    static func encode(_ value: some Encodable) -> [UInt8] { Array(try! JSONEncoder().encode(value)) }
}

/// The stores these tests run the relay on.
enum RelayStoreKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite, postgres
    var testDescription: String { rawValue }
}

/// One test's relays: a store (SQLite file or a fresh PostgreSQL database), an issuer, two instances on it.
struct RelayServiceFixture: Sendable {
    let root: String
    let issuer: TestIdentityIssuer
    let a: RelayServiceProcess
    let b: RelayServiceProcess

    static func start(_ kind: RelayStoreKind) async throws -> RelayServiceFixture {
        var template = Array("/tmp/kvrelay-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw TestFailure("mkdtemp failed") }
        let root = String(cString: made)
        let store: String
        switch kind {
        case .sqlite:
            store = "sqlite:" + root + "/relay.sqlite"
        case .postgres:
            guard let server = ProcessInfo.processInfo.environment["KEYVAULT_TEST_POSTGRES"], var url = URLComponents(string: server) else {
                throw TestFailure("KEYVAULT_TEST_POSTGRES is not set: run `make test`, or scripts/with-test-postgres.sh swift test …")
            }
            let database = "kvrelay_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16)
            let created = try await run("/usr/bin/psql", [server, "-X", "-qAt", "-v", "ON_ERROR_STOP=1", "-c", "CREATE DATABASE \(database)"])
            guard created.status == 0 else { throw TestFailure("psql: \(created.err)") }
            url.path = "/" + database
            store = url.string!
        }
        let issuer = try await TestIdentityIssuer.make(in: root)
        let a = RelayServiceProcess(store: store, issuer: issuer, logPath: root + "/relay-a.log")
        let b = RelayServiceProcess(store: store, issuer: issuer, logPath: root + "/relay-b.log")
        try await a.start()
        do {
            try await b.start()
        } catch {
            a.remove()
            throw error
        }
        return RelayServiceFixture(root: root, issuer: issuer, a: a, b: b)
    }

    func stop() async {
        #expect(await a.stop() == 0)
        #expect(await b.stop() == 0)
        // No identity token (a JWT starts "eyJ") ever reaches a log.
        for relay in [a, b] {
            #expect(!relay.logText().contains("eyJ"), "a token in \(relay.logPath)")
        }
        try? FileManager.default.removeItem(atPath: root)
    }
    /// A new account: its first device becomes a candidate with a real token, then publishes the genesis.
    func createAccount(_ account: String, on relay: RelayServiceProcess? = nil) async throws -> (TestDevice, CircleState) {
        let relay = relay ?? a
        let device = TestDevice(name: "first")
        let filed = try await relay.candidacy(account, device, token: try await issuer.token(for: account, device: device))
        #expect(filed.status == 200, "candidacy: \(filed.text)")
        var circle = CircleState(account: try AccountID(validating: account))
        let genesis = circle.nextEntry(.genesis(device: device.keys, generation: 1, keyID: SecretKey.generate().keyID(label: Labels.keyID),
                                                keyCreatedAt: UInt64(Date().timeIntervalSince1970 * 1000)),
                                       signer: device.signing, signerID: device.id, at: Date())
        try circle.apply(genesis)
        let published = try await relay.publish(account, [.log(genesis)], as: device)
        #expect(published.status == 200, "genesis: \(published.text)")
        return (device, circle)
    }
}
