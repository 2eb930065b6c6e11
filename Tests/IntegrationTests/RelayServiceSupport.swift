import AsyncHTTPClient
import Foundation
import KeyVaultTestSupport
import NIOCore
import NIOHTTP1
import Testing
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultRelayWire
import KeyVaultAccount
#if canImport(Glibc)
import Glibc
#endif

/// The local issuer (KeyVaultTestSupport), with tokens for a test device's keys.
typealias TestIssuer = TestIdentityIssuer

extension TestIdentityIssuer {
    /// A token for `account` bound to `device`, with any claim overridden.
    func token(for account: String, device: TestDevice, issuer: String = TestIssuer.issuer, audience: String = TestIssuer.audience,
               expires: Date = Date().addingTimeInterval(600), nonce: String? = nil, wronglySigned: Bool = false,
               namingNoKey: Bool = false) async throws -> String {
        try await token(account: account, nonce: nonce ?? device.identityNonce, issuer: issuer, audience: audience,
                        expiresIn: expires.timeIntervalSinceNow, wronglySigned: wronglySigned, namingNoKey: namingNoKey)
    }
}

/// A device of the tests: its keys, and signed requests made with them.
struct TestDevice: Sendable {
    let signing: SigningKey
    let box: BoxSecretKey
    let keys: DeviceKeys
    var id: DeviceID { keys.deviceID }
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

/// A real `keyvault-relay` process on 127.0.0.1, port chosen by the kernel.
final class RelayServiceProcess: @unchecked Sendable {
    let process: ChildProcess
    let port: Int
    let logPath: String
    /// `https` when it serves TLS: its requests then trust whatever certificate it serves.
    let scheme: String
    var base: String { "\(scheme)://127.0.0.1:\(port)" }
    /// A client for a relay serving TLS that takes any certificate (what is tested is the relay, not the trust).
    static let anyCertificate = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(certificateVerification: .none))

    /// `tls`: a certificate and key (PEM) to serve HTTPS with; plain HTTP without.
    static func start(store: String, issuer: TestIssuer, root: String, name: String,
                      tls: (certificate: String, key: String)? = nil, arguments: [String] = []) async throws -> RelayServiceProcess {
        let out = root + "/\(name).out", log = root + "/\(name).log"
        let transport = tls.map { ["--tls-cert", $0.certificate, "--tls-key", $0.key] } ?? ["--plain-http"]
        let process = try ChildProcess(DaemonProcess.binaryDirectory + "/keyvault-relay", [
            "--store", store, "--listen", "127.0.0.1:0",
        ] + transport + issuer.relayArguments + arguments, stdoutPath: out, stderrPath: log)
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            let text = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
            if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("listening on ") }),
               let port = line.split(separator: ":").last.flatMap({ Int($0) }) {
                return RelayServiceProcess(process: process, port: port, logPath: log, scheme: tls == nil ? "http" : "https")
            }
            guard process.isRunning else { break }
            try await Task.sleep(for: .milliseconds(5))
        }
        process.signal(SIGKILL)
        let said = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        throw TestFailure("keyvault-relay did not start: \(said)")
    }

    private init(process: ChildProcess, port: Int, logPath: String, scheme: String) {
        self.process = process
        self.port = port
        self.logPath = logPath
        self.scheme = scheme
    }

    /// A relay a test started itself (other options), to call like the others.
    convenience init(attaching process: ChildProcess, port: Int, logPath: String, scheme: String = "http") {
        self.init(process: process, port: port, logPath: logPath, scheme: scheme)
    }

    /// SIGTERM, and the exit status.
    @discardableResult
    func stop() async -> Int32 {
        process.signal(SIGTERM)
        return await process.wait()
    }

    func kill9() async {
        process.signal(SIGKILL)
        _ = await process.wait()
    }

    /// Kills and reaps it without waiting on anything else (for cleanup).
    func remove() {
        process.killAndReap()
    }

    /// Sends a request signed by `device` (or unsigned), with headers added or replaced after signing.
    func send(_ method: String, _ path: String, query: String = "", body: [UInt8] = [], as device: TestDevice?,
              headers extra: [(String, String)] = [], signed: [(String, String)]? = nil, timeout: TimeAmount = .seconds(70)) async throws -> Answer {
        var request = HTTPClientRequest(url: base + path + (query.isEmpty ? "" : "?" + query))
        request.method = HTTPMethod(rawValue: method)
        let signedHeaders = signed ?? device?.signedHeaders(method: method, path: path, query: query, body: body) ?? []
        for (name, value) in signedHeaders { request.headers.replaceOrAdd(name: name, value: value) }
        for (name, value) in extra { request.headers.replaceOrAdd(name: name, value: value) }
        if !body.isEmpty {
            request.headers.replaceOrAdd(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let response = try await (scheme == "https" ? Self.anyCertificate : HTTPClient.shared).execute(request, timeout: timeout)
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

    func read(_ account: String, after: RelayCursor = .start, wait: Int? = nil, as device: TestDevice) async throws -> Answer {
        let query = "after=\(after)&limit=1000" + (wait.map { "&wait=\($0)" } ?? "")
        return try await send("GET", "/v1/accounts/\(account)/records", query: query, as: device)
    }

    /// The rows, or a failure saying what answered instead.
    func rows(_ account: String, after: RelayCursor = .start, wait: Int? = nil, as device: TestDevice) async throws -> [RelayRow] {
        let answer = try await read(account, after: after, wait: wait, as: device)
        guard answer.status == 200 else { throw TestFailure("read \(account): \(answer.status) \(answer.text)") }
        let account = try AccountID(validating: account)
        return try answer.json(RelayWire.Rows.self).rows.compactMap { $0.row(account: account) }
    }
}

enum JSONBody {
    static func encode(_ value: some Encodable) -> [UInt8] { Array(try! JSONEncoder().encode(value)) }
}

/// One test's relays: a store (SQLite file or a fresh PostgreSQL database), an issuer, two instances on it.
struct RelayServiceFixture: Sendable {
    let root: String
    /// The store both instances share: `sqlite:PATH`, or the PostgreSQL database's URL.
    let storeAddress: String
    let issuer: TestIssuer
    let a: RelayServiceProcess
    let b: RelayServiceProcess

    /// `arguments`: more options for both instances. `prepare` runs on the store's address
    /// before the instances start (a setting their connections must see from the first).
    static func start(_ kind: RelayKind, arguments: [String] = [],
                      prepare: (String) async throws -> Void = { _ in }) async throws -> RelayServiceFixture {
        var template = Array("/tmp/kvrelay-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw TestFailure("mkdtemp failed") }
        let root = String(cString: made)
        // The service on each store: a SQLite file, or a PostgreSQL database.
        let store = try await TestRelayStore.make(kind, in: root, startingService: false)
        let issuer = try await TestIssuer.make(in: root)
        try await prepare(store.storeAddress)
        let a = try await RelayServiceProcess.start(store: store.storeAddress, issuer: issuer, root: root, name: "a", arguments: arguments)
        let b = try await RelayServiceProcess.start(store: store.storeAddress, issuer: issuer, root: root, name: "b", arguments: arguments)
        return RelayServiceFixture(root: root, storeAddress: store.storeAddress, issuer: issuer, a: a, b: b)
    }

    /// Runs `body` on a fresh fixture and stops it afterwards, whatever the outcome.
    static func with(_ kind: RelayKind, arguments: [String] = [], prepare: (String) async throws -> Void = { _ in },
                     _ body: (RelayServiceFixture) async throws -> Void) async throws {
        let fixture = try await start(kind, arguments: arguments, prepare: prepare)
        do {
            try await body(fixture)
        } catch {
            await fixture.stop()
            throw error
        }
        await fixture.stop()
    }

    func stop() async {
        #expect(await a.stop() == 0)
        #expect(await b.stop() == 0)
        // No identity token (a JWT starts "eyJ") ever reaches a log.
        for relay in [a, b] {
            let log = (try? String(contentsOfFile: relay.logPath, encoding: .utf8)) ?? ""
            #expect(!log.contains("eyJ"), "a token in \(relay.logPath)")
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
        let genesis = circle.nextEntry(.genesis(device: device.keys, generation: 1, keyID: KeyID(of: SecretKey.generate()),
                                                keyCreatedAt: UInt64(Date().timeIntervalSince1970 * 1000)),
                                       signer: device.signing, signerID: device.id, at: Date())
        try circle.apply(genesis)
        let published = try await relay.publish(account, [.log(genesis)], as: device)
        #expect(published.status == 200, "genesis: \(published.text)")
        return (device, circle)
    }
}

extension RelayServiceFixture {
    /// A second device joins `account` by pairing version 2, as daemons do (docs/PAIRING.md):
    /// request, response, confirmation, then the approve entry with its approval. `circle` is
    /// the account's circle; it comes back with the approve entry applied.
    func enrollSecond(_ account: String, first: TestDevice, circle: inout CircleState, name: String = "second") async throws -> TestDevice {
        let accountID = try AccountID(validating: account)
        let second = TestDevice(name: name)
        #expect(try await b.candidacy(account, second, token: try await issuer.token(for: account, device: second)).status == 200)
        let code = Pairing.drawCode()
        let started = try PairingRequest.make(account: accountID, device: second.keys, signer: second.signing, code: code,
                                              headHash: circle.headHash, at: Date())
        let request = started.request
        #expect(try await b.publish(account, [.request(request)], as: second).status == 200)
        let answering = try PairingResponse.make(to: request, code: code, responder: first.id, signer: first.signing, circle: circle)
        #expect(try await a.publish(account, [.challenge(answering.response)], as: first).status == 200)
        guard case .confirmed(let confirmation, _) = Pairing.answer(answering.response, to: request, initiator: started.takeInitiator(),
                                                                      circle: circle, signer: second.signing) else {
            throw TestFailure("the genuine response did not confirm")
        }
        #expect(try await b.publish(account, [.reveal(confirmation)], as: second).status == 200)
        let checked = try PairingConfirmation.decode(confirmation.encoded, request: request)
        let completed = Pairing.complete(checked, responder: answering.takeResponder())
        let approval = try Self.approval(of: second, request: request, sessionKey: try #require(completed), by: first, circle: &circle)
        #expect(try await a.publish(account, [.log(approval.entry), .challenge(approval.record)], as: first).status == 200)
        return second
    }

    /// A member's approval of `device`, whose request's exchange ended with `sessionKey`: the approve
    /// entry (applied to `circle`) and the pairing approval that travels with it.
    static func approval(of device: TestDevice, request: PairingRequest, sessionKey: CPace.SessionKey, by member: TestDevice,
                         circle: inout CircleState) throws -> (entry: LogEntry, record: PairingApproval) {
        let approve = circle.nextEntry(.approve(device: device.keys, requestHash: request.hash), signer: member.signing,
                                       signerID: member.id, at: Date())
        let genesisHash = try #require(circle.entries.first).hash
        try circle.apply(approve)
        return (approve, PairingApproval.make(entry: approve, request: request, genesisHash: genesisHash, sessionKey: sessionKey,
                                              signer: member.signing))
    }
}
