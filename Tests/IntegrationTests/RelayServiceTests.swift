import AsyncHTTPClient
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import Testing
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultRelayWire
import KeyVaultAccount

/// `keyvault-relay` as devices meet it (docs/RELAY.md): real processes, two
/// instances on one store (SQLite file or PostgreSQL database), real ES256
/// identity tokens from a test issuer. Every refusal is checked to have
/// changed nothing by reading the account as a member afterwards.
@Suite("RelayService", .serialized)
struct RelayServiceTests {
    /// RELAY.md's vector: seed 0x00…1f, the GET in the spec (signature computed independently, with Python's `cryptography`).
    @Test func signatureBaseMatchesTheSpecVector() throws {
        let key = try SigningKey(seed: SecureBytes(copying: (0..<32).map { UInt8($0) }))
        let signature = RequestSignature(method: "get", path: "/v1/accounts/alice/records", query: "after=0&limit=500", body: [],
                                         created: 1_767_225_600, nonce: "AAECAwQFBgcICQoLDA0ODw==", keyID: DeviceID(testHex: "00112233445566778899aabbccddeeff"))
        let base = """
            "@method": GET
            "@path": /v1/accounts/alice/records
            "@query": ?after=0&limit=500
            "content-digest": sha-256=:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=:
            "@signature-params": ("@method" "@path" "@query" "content-digest");created=1767225600;nonce="AAECAwQFBgcICQoLDA0ODw==";keyid="00112233445566778899aabbccddeeff";alg="ed25519"
            """
        #expect(String(decoding: signature.base, as: UTF8.self) == base)
        #expect(signature.signatureHeader(signedBy: key)
                == "kv=:yOlMiGUoHGM7/INHd2CmgAClfZc+7D+ZPmC+MPkHJTCHvD8KYavnE5cEff3A0H0SrfNmRg0mcMoaUXjSxQ/NAw==:")
    }

    /// The whole enrollment through two instances: candidate, request, challenge, reveal, approval, share, ack;
    /// a held read on one instance woken by a write on the other, and not by another account's write; SIGTERM answers held reads.
    @Test(arguments: RelayKind.allCases)
    func enrollmentAcrossInstances(_ kind: RelayKind) async throws {
        try await RelayServiceFixture.with(kind, arguments: ["--metrics-listen", "127.0.0.1:0"]) { f in
            let account = "alice"
            let accountID = try AccountID(validating: account)
            var (first, circle) = try await f.createAccount(account, on: f.a)
            let (bob, _) = try await f.createAccount("bob", on: f.a)
            let second = TestDevice(name: "second")
            let filed = try await f.b.candidacy(account, second, token: try await f.issuer.token(for: account, device: second))
            #expect(filed.status == 200)
            #expect(try filed.json(RelayWire.Candidate.self).accountExists == true)
            #expect(try filed.json(RelayWire.Candidate.self).candidate == second.id.hex)

            // A held read on A; another account's write leaves it held; the request on B wakes it.
            let last = try #require(try await f.a.rows(account, as: first).last?.cursor)
            let started = ContinuousClock.now
            let held = Task { try await f.a.rows(account, after: last, wait: 20, as: first) }
            try await eventually { try await f.a.metric("keyvault_relay_held_reads") == 1 }
            let bobShare = RelayRecord.share(account: try AccountID(validating: "bob"), recipient: bob.id, sealed: Random.bytes(100))
            #expect(try await f.b.publish("bob", [bobShare], as: bob).status == 200)
            // A request of pairing version 1 is refused, saying what to do.
            let old = EnrollmentRequest.make(account: accountID, device: second.keys, signer: second.signing,
                                             headHash: circle.headHash, secret: Random.bytes(32), at: Date())
            let refusedOld = try await f.b.publish(account, [.request(old)], as: second)
            #expect(refusedOld.status == 400)
            #expect(refusedOld.refusal?.reason.contains("pairing version 1 is retired") == true, "\(refusedOld.text)")
            let code = Pairing.drawCode()
            let pairing = try PairingRequest.make(account: accountID, device: second.keys, signer: second.signing, code: code,
                                                  headHash: circle.headHash, at: Date())
            let request = pairing.request
            #expect(try await f.b.publish(account, [.request(request)], as: second).status == 200)
            let woken = try await held.value
            #expect(woken.map(\.record.kind) == [.request])
            #expect(ContinuousClock.now - started < .seconds(10))

            let answering = try PairingResponse.make(to: request, code: code, responder: first.id, signer: first.signing, circle: circle)
            let response = answering.response
            #expect(try await f.a.publish(account, [.challenge(response)], as: first).status == 200)
            let seen = try await f.b.rows(account, as: second)
            #expect(seen.map(\.record.kind) == [.log, .request, .challenge])
            guard case .confirmed(let confirmation, _) = Pairing.answer(response, to: request, initiator: pairing.takeInitiator(),
                                                                          circle: circle, signer: second.signing) else {
                Issue.record("the genuine response did not confirm")
                return
            }
            #expect(try await f.b.publish(account, [.reveal(confirmation)], as: second).status == 200)

            let approve = circle.nextEntry(.approve(device: second.keys, requestHash: request.hash), signer: first.signing, signerID: first.id, at: Date())
            try circle.apply(approve)
            #expect(try await f.a.publish(account, [.log(approve)], as: first).status == 200)
            // Retention: the finished enrollment's request, challenge and reveal are gone.
            #expect(try await f.a.rows(account, as: first).map(\.record.kind) == [.log, .log])
            // Repeated (a lost answer): accepted, stored once.
            let again = try await f.b.publish(account, [.log(approve)], as: first)
            #expect(again.status == 200)
            #expect(try again.json(RelayWire.Published.self).stored == 0)

            let current = try #require(circle.current)
            let header = KeyShare.Header(account: accountID, generation: current.generation, keyID: current.keyID, createdAt: current.createdAt,
                                         sender: first.id, recipient: second.id)
            let sealed = KeyShare(header: header, key: SecretKey.generate()).seal(signer: first.signing, to: second.keys.box)
            #expect(try await f.a.publish(account, [.share(account: accountID, recipient: second.id, sealed: sealed)], as: first).status == 200)
            let ack = ShareAck.make(account: accountID, generation: current.generation, keyID: current.keyID, deviceID: second.id,
                                    signer: second.signing, at: Date())
            #expect(try await f.b.publish(account, [.ack(ack)], as: second).status == 200)
            // Retention: the share is settled once its recipient holds every announced key; the ack stays.
            #expect(try await f.a.rows(account, as: first).map(\.record.kind) == [.log, .log, .ack])

            // Two devices write entry 2: the first lands, the other (other bytes, same number) is refused as taken.
            let revokeFirst = circle.nextEntry(.revoke(deviceID: first.id), signer: second.signing, signerID: second.id, at: Date())
            let otherEntry = circle.nextEntry(.announce(generation: 2, keyID: KeyID(Random.bytes(16)), keyCreatedAt: 1), signer: first.signing,
                                              signerID: first.id, at: Date())
            #expect(try await f.a.publish(account, [.log(otherEntry)], as: first).status == 200)
            let taken = try await f.b.publish(account, [.log(revokeFirst)], as: second)
            #expect(taken.status == 409)
            #expect(taken.refusal?.error == "log-seq-taken")
            #expect(taken.refusal?.seq == 2)

            let all = try await f.b.rows(account, as: second)
            #expect(all.map(\.record.kind) == [.log, .log, .ack, .log])

            // Another candidate reads the log, challenges and reveals, not others' requests, shares or acks.
            let third = TestDevice(name: "third")
            #expect(try await f.a.candidacy(account, third, token: try await f.issuer.token(for: account, device: third)).status == 200)
            let thirdCode = Pairing.drawCode()
            let thirdRequest = try PairingRequest.make(account: accountID, device: third.keys, signer: third.signing, code: thirdCode,
                                                       headHash: circle.headHash, at: Date()).request
            #expect(try await f.a.publish(account, [.request(thirdRequest)], as: third).status == 200)
            let thirdResponse = try PairingResponse.make(to: thirdRequest, code: thirdCode, responder: second.id, signer: second.signing,
                                                         circle: circle).response
            #expect(try await f.b.publish(account, [.challenge(thirdResponse)], as: second).status == 200)
            #expect(try await f.a.rows(account, as: third).map(\.record.kind) == [.log, .log, .log, .request, .challenge])
            let fourth = TestDevice(name: "fourth")
            #expect(try await f.a.candidacy(account, fourth, token: try await f.issuer.token(for: account, device: fourth)).status == 200)
            #expect(try await f.b.rows(account, as: fourth).map(\.record.kind) == [.log, .log, .log, .challenge])

            // SIGTERM answers a held read at once, with what there is.
            let end = try #require(try await f.a.rows(account, as: second).last?.cursor)
            let drained = Task { try await f.b.read(account, after: end, wait: 30, as: second) }
            try await eventually { try await f.b.metric("keyvault_relay_held_reads") == 1 }
            let stopping = ContinuousClock.now
            #expect(await f.b.stop() == 0)
            let answer = try await drained.value
            #expect(answer.status == 200)
            #expect(try answer.json(RelayWire.Rows.self).rows.isEmpty)
            #expect(ContinuousClock.now - stopping < .seconds(5))
        }
    }

    /// Pairing version 2 (docs/PAIRING.md) through two instances: the candidate's request with `Ya`, the
    /// member's response, the candidate's confirmation, then the approve entry, the approval and a share in
    /// one batch. Who may publish each is checked; the new device authenticates its approval with the
    /// exchange's key; retention keeps the approval until the new device holds every key, then prunes it.
    @Test(arguments: RelayKind.allCases)
    func pairingVersion2Exchange(_ kind: RelayKind) async throws {
        try await RelayServiceFixture.with(kind) { f in
            let account = "fay"
            let accountID = try AccountID(validating: account)
            var (first, circle) = try await f.createAccount(account, on: f.a)
            let second = TestDevice(name: "second")
            #expect(try await f.b.candidacy(account, second, token: try await f.issuer.token(for: account, device: second)).status == 200)
            let code = Pairing.drawCode()
            let started = try PairingRequest.make(account: accountID, device: second.keys, signer: second.signing, code: code,
                                                  headHash: circle.headHash, at: Date())
            let request = started.request
            #expect(try await f.b.publish(account, [.request(request)], as: second).status == 200)

            // The member reads the request and answers with the code the person typed there.
            let seenRequest = try #require(try await f.a.rows(account, as: first).first { $0.record.kind == .request })
            let answering = try PairingResponse.make(to: try PairingRequest.decode(seenRequest.record.body), code: code,
                                                     responder: first.id, signer: first.signing, circle: circle)
            let response = answering.response
            // A candidate may not answer a request (a response is a member's).
            #expect(try await f.b.publish(account, [.challenge(response)], as: second).status == 403)
            #expect(try await f.a.publish(account, [.challenge(response)], as: first).status == 200)

            // The new device takes the response and confirms it; a member may not confirm for it.
            let seenResponse = try #require(try await f.b.rows(account, as: second).first { $0.record.kind == .challenge })
            let taken = try PairingResponse.accept(seenResponse.record.body, in: circle)
            guard case .confirmed(let confirmation, let newDeviceKey) = Pairing.answer(
                taken, to: request, initiator: started.takeInitiator(), circle: circle, signer: second.signing) else {
                Issue.record("the genuine response did not confirm")
                return
            }
            #expect(try await f.a.publish(account, [.reveal(confirmation)], as: first).status == 403)
            #expect(try await f.b.publish(account, [.reveal(confirmation)], as: second).status == 200)

            let seenConfirmation = try #require(try await f.a.rows(account, as: first).first { $0.record.kind == .reveal })
            let checked = try PairingConfirmation.decode(seenConfirmation.record.body, request: request)
            let completed = Pairing.complete(checked, responder: answering.takeResponder())
            let (approve, approval) = try RelayServiceFixture.approval(of: second, request: request, sessionKey: try #require(completed),
                                                                       by: first, circle: &circle)
            let current = try #require(circle.current)
            let header = KeyShare.Header(account: accountID, generation: current.generation, keyID: current.keyID, createdAt: current.createdAt,
                                         sender: first.id, recipient: second.id)
            let sealed = KeyShare(header: header, key: SecretKey.generate()).seal(signer: first.signing, to: second.keys.box)
            #expect(try await f.a.publish(account, [.log(approve), .challenge(approval),
                                                    .share(account: accountID, recipient: second.id, sealed: sealed)], as: first).status == 200)

            // The exchange's rows are gone but the approval, which the new device reads and authenticates.
            let rows = try await f.b.rows(account, as: second)
            #expect(rows.map(\.record.kind) == [.log, .log, .challenge, .share])
            let seenApproval = try PairingApproval.decode(try #require(rows.first { $0.record.kind == .challenge }).record.body) {
                circle.members[$0]?.keys.signing
            }
            #expect(Pairing.isAuthenticApproval(seenApproval, of: approve, request: request, sessionKey: newDeviceKey, circle: circle))

            // Once the new device holds every key, its share and the approval go; the ack stays.
            let ack = ShareAck.make(account: accountID, generation: current.generation, keyID: current.keyID, deviceID: second.id,
                                    signer: second.signing, at: Date())
            #expect(try await f.b.publish(account, [.ack(ack)], as: second).status == 200)
            #expect(try await f.a.rows(account, as: first).map(\.record.kind) == [.log, .log, .ack])
        }
    }

    /// A device revoked while its read is held is answered with the log through its revocation and
    /// nothing after it (not the rotation that follows, not a share sealed to it); later it reads
    /// nothing more and writes nothing, and the shares sealed to it are pruned.
    @Test(arguments: RelayKind.allCases)
    func revokedDeviceReadsThroughItsRevocation(_ kind: RelayKind) async throws {
        try await RelayServiceFixture.with(kind, arguments: ["--metrics-listen", "127.0.0.1:0"]) { f in
            let account = "erin"
            let accountID = try AccountID(validating: account)
            var (first, circle) = try await f.createAccount(account, on: f.a)
            let second = TestDevice(name: "second")
            let approve = circle.nextEntry(.approve(device: second.keys, requestHash: RequestHash(computed: [UInt8](repeating: 0, count: 32))),
                                           signer: first.signing, signerID: first.id, at: Date())
            try circle.apply(approve)
            #expect(try await f.a.publish(account, [.log(approve)], as: first).status == 200)
            let last = try #require(try await f.b.rows(account, as: second).last?.cursor)

            let held = Task { try await f.b.rows(account, after: last, wait: 20, as: second) }
            try await eventually { try await f.b.metric("keyvault_relay_held_reads") == 1 }
            let revoke = circle.nextEntry(.revoke(deviceID: second.id), signer: first.signing, signerID: first.id, at: Date())
            try circle.apply(revoke)
            let announce = circle.nextEntry(.announce(generation: 2, keyID: KeyID(Random.bytes(16)), keyCreatedAt: 1), signer: first.signing,
                                            signerID: first.id, at: Date())
            try circle.apply(announce)
            let share = RelayRecord.share(account: accountID, recipient: second.id, sealed: Random.bytes(100))
            #expect(try await f.a.publish(account, [.log(revoke), .log(announce), share], as: first).status == 200)

            let woken = try await held.value
            #expect(woken.map(\.record.logSeq) == [revoke.seq])
            let end = try #require(woken.last?.cursor)
            #expect(try await f.a.rows(account, after: end, as: second).isEmpty)
            #expect(try await f.b.rows(account, as: second).compactMap(\.record.logSeq) == [0, 1, 2])
            let ack = ShareAck.make(account: accountID, generation: 1, keyID: try #require(circle.generations.first).keyID,
                                    deviceID: second.id, signer: second.signing, at: Date())
            let refused = try await f.a.publish(account, [.ack(ack)], as: second)
            #expect(refused.status == 403)
            #expect(refused.refusal?.error == "forbidden")
            // A candidacy filed again with the same keys does not bring it back.
            #expect(try await f.b.candidacy(account, second, token: try await f.issuer.token(for: account, device: second)).status == 200)
            #expect(try await f.a.publish(account, [.ack(ack)], as: second).status == 403)
            // The member reads the whole log and no share: the one sealed to the revoked device is gone.
            #expect(try await f.a.rows(account, as: first).map(\.record.kind) == [.log, .log, .log, .log])
        }
    }

    /// A request whose body or head trickles in is closed at the service's request deadline (here 2 s),
    /// and what it would have written is not stored; a held read, whose request arrived whole, is not cut.
    /// The three run side by side (the head on the other instance), so the test takes the held read's 4 s.
    @Test func slowRequestsClosedAtTheDeadline() async throws {
        try await RelayServiceFixture.with(.sqlite, arguments: ["--request-timeout", "2"]) { f in
            let account = "slow"
            let (first, _) = try await f.createAccount(account)
            let before = try await f.a.rows(account, as: first)
            let last = try #require(before.last?.cursor)

            // A held read longer than the deadline, answered whole, beside the trickles.
            let heldStarted = ContinuousClock.now
            async let held = f.a.read(account, after: last, wait: 4, as: first)
            async let head = Self.trickleHead(port: f.b.port)

            let share = JSONBody.encode(RelayWire.Publish(records: [RelayWire.Record(.share(account: try AccountID(validating: account),
                                                                                            recipient: first.id, sealed: Random.bytes(100)))]))
            let path = "/v1/accounts/\(account)/records"
            let headers = first.signedHeaders(method: "POST", path: path, query: "", body: share)
            let body = try RawSocket(tcpPort: f.a.port)
            var requestHead = "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(share.count)\r\n"
            for (name, value) in headers { requestHead += "\(name): \(value)\r\n" }
            body.send(requestHead + "\r\n")
            let started = ContinuousClock.now
            var sent = 0
            while sent < share.count - 1, ContinuousClock.now - started < .seconds(8), body.send([share[sent]]) {
                sent += 1
                try await Task.sleep(for: .milliseconds(200))
                if !body.readAvailable() { break }
            }
            #expect(try await body.readToEOF(timeout: .seconds(5)), "the service closed the trickling body")
            #expect(ContinuousClock.now - started < .seconds(8))
            #expect(sent < share.count - 1, "the body was cut off before it was whole")

            let (headClosed, headTook) = try await head
            #expect(headClosed, "the service closed the trickling head")
            #expect(headTook < .seconds(8))

            // Nothing of the cut-off request was stored; the held read was answered whole, after its wait.
            #expect(try await held.status == 200)
            #expect(ContinuousClock.now - heldStarted >= .seconds(3))
            #expect(try await f.b.rows(account, as: first) == before)
        }
    }

    /// A request head sent a header line every 200 ms: whether the service closed it, and when.
    static func trickleHead(port: Int) async throws -> (closed: Bool, took: Duration) {
        let slowHead = try RawSocket(tcpPort: port)
        slowHead.send("GET /v1/health HTTP/1.1\r\n")
        let started = ContinuousClock.now
        while ContinuousClock.now - started < .seconds(8), slowHead.send("X-Slow: 1\r\n") {
            try await Task.sleep(for: .milliseconds(200))
            if !slowHead.readAvailable() { break }
        }
        let closed = try await slowHead.readToEOF(timeout: .seconds(5))
        return (closed, ContinuousClock.now - started)
    }

    /// A member of Y touches X: appends to its log, posts a share, posts an ack, reads it, probes whether it
    /// exists; a genesis without a token. All refused, the strangers' probes answered like a missing account.
    @Test(arguments: RelayKind.allCases)
    func strangersAreRefused(_ kind: RelayKind) async throws {
        try await RelayServiceFixture.with(kind) { f in
            let (x1, xCircle) = try await f.createAccount("xavier")
            let (y1, _) = try await f.createAccount("yolanda", on: f.b)
            let x = try AccountID(validating: "xavier")
            let before = try await f.a.rows("xavier", as: x1)

            let intrusion = xCircle.nextEntry(.approve(device: y1.keys, requestHash: RequestHash(computed: [UInt8](repeating: 0, count: 32))),
                                              signer: y1.signing, signerID: y1.id, at: Date())
            let forbidden = try await f.a.publish("xavier", [.log(intrusion)], as: y1)
            #expect(forbidden.status == 403)
            #expect(forbidden.refusal?.error == "forbidden")
            #expect(try await f.b.publish("xavier", [.share(account: x, recipient: y1.id, sealed: Random.bytes(200))], as: y1).body == forbidden.body)
            let ack = ShareAck.make(account: x, generation: 1, keyID: try #require(xCircle.current).keyID, deviceID: y1.id, signer: y1.signing, at: Date())
            #expect(try await f.a.publish("xavier", [.ack(ack)], as: y1).body == forbidden.body)

            // Reading X, and reading or writing an account that does not exist: one answer.
            let read = try await f.a.read("xavier", as: y1)
            #expect(read.status == 403)
            let missing = try await f.a.read("nobody-at-all", as: y1)
            #expect(missing.status == read.status && missing.body == read.body)
            let missingWrite = try await f.b.publish("nobody-at-all", [.share(account: try AccountID(validating: "nobody-at-all"),
                                                                                recipient: y1.id, sealed: Random.bytes(200))], as: y1)
            #expect(missingWrite.status == 403 && missingWrite.body == forbidden.body)
            // A held read by a stranger is refused before it waits.
            #expect(try await f.a.read("xavier", wait: 30, as: y1).status == 403)

            // A genesis for a new account from a device that never showed a token; a candidacy without one.
            let z = TestDevice()
            var zCircle = CircleState(account: try AccountID(validating: "zed"))
            let genesis = zCircle.nextEntry(.genesis(device: z.keys, generation: 1, keyID: KeyID(Random.bytes(16)), keyCreatedAt: 1),
                                            signer: z.signing, signerID: z.id, at: Date())
            try zCircle.apply(genesis)
            #expect(try await f.a.publish("zed", [.log(genesis)], as: z).status == 403)
            let tokenless = try await f.a.candidacy("zed", z, token: "")
            #expect(tokenless.status == 401)
            #expect(tokenless.refusal?.error == "identity")
            #expect(try await f.b.publish("zed", [.log(genesis)], as: z).status == 403)

            // Nothing changed: X as its member reads what it read before; zed has no log (a genuine candidate is told so).
            #expect(try await f.b.rows("xavier", as: x1) == before)
            let genuine = TestDevice()
            let filed = try await f.a.candidacy("zed", genuine, token: try await f.issuer.token(for: "zed", device: genuine))
            #expect(try filed.json(RelayWire.Candidate.self).accountExists == false)
        }
    }

    /// Identity tokens: wrong audience, wrong issuer, expired, wrongly signed, another account's, bound to
    /// other keys: each 401 `identity` saying which, and the device is no candidate afterwards.
    @Test(arguments: RelayKind.allCases)
    func identityTokensAreChecked(_ kind: RelayKind) async throws {
        try await RelayServiceFixture.with(kind) { f in
            let account = "carol"
            let other = TestDevice()
            let cases: [(String, @Sendable (TestDevice) async throws -> String)] = [
                ("another audience", { try await f.issuer.token(for: account, device: $0, audience: "someone-else") }),
                ("another issuer", { try await f.issuer.token(for: account, device: $0, issuer: "https://evil.example") }),
                ("expired", { try await f.issuer.token(for: account, device: $0, expires: Date().addingTimeInterval(-120)) }),
                ("signature does not verify", { try await f.issuer.token(for: account, device: $0, wronglySigned: true) }),
                ("another account", { try await f.issuer.token(for: "mallory", device: $0) }),
                ("other device keys", { try await f.issuer.token(for: account, device: $0, nonce: other.identityNonce) }),
                ("not a JWT", { _ in "not-a-token" }),
            ]
            for (expected, token) in cases {
                let device = TestDevice()
                let answer = try await f.a.candidacy(account, device, token: try await token(device))
                #expect(answer.status == 401, "\(expected): \(answer.text)")
                #expect(answer.refusal?.error == "identity")
                #expect(answer.refusal?.reason.contains(expected) == true, "\(expected): \(answer.text)")
                // Not a candidate: its genesis is forbidden.
                var circle = CircleState(account: try AccountID(validating: account))
                let genesis = circle.nextEntry(.genesis(device: device.keys, generation: 1, keyID: KeyID(Random.bytes(16)), keyCreatedAt: 1),
                                               signer: device.signing, signerID: device.id, at: Date())
                try circle.apply(genesis)
                #expect(try await f.b.publish(account, [.log(genesis)], as: device).status == 403)
            }
            // The account was never made: its genuine first device is told so, and makes it.
            let genuine = TestDevice()
            let filed = try await f.b.candidacy(account, genuine, token: try await f.issuer.token(for: account, device: genuine))
            #expect(filed.status == 200)
            #expect(try filed.json(RelayWire.Candidate.self).accountExists == false)
        }
    }

    /// Signed requests: a bare user-ID header, a replay on the same and on the other instance, a stale or
    /// future `created`, a Content-Digest that does not match the body. Each 401 `unsigned`, nothing stored,
    /// but for a read replayed on the other instance, which is answered as its signer would be.
    @Test(arguments: RelayKind.allCases)
    func signedRequestsAreChecked(_ kind: RelayKind) async throws {
        try await RelayServiceFixture.with(kind) { f in
            let account = "dora"
            let (d1, _) = try await f.createAccount(account)
            let before = try await f.a.rows(account, as: d1)
            let path = "/v1/accounts/\(account)/records"

            let bare = try await f.a.send("GET", path, query: "after=0", as: nil, headers: [("X-Apple-User-Id", account)])
            #expect(bare.status == 401)
            #expect(bare.refusal?.error == "unsigned")
            let share = JSONBody.encode(RelayWire.Publish(records: [RelayWire.Record(.share(account: try AccountID(validating: account),
                                                                                            recipient: d1.id, sealed: Random.bytes(100)))]))
            #expect(try await f.b.send("POST", path, body: share, as: nil, headers: [("X-Apple-User-Id", account)]).status == 401)

            // One signed read, three times: A accepts it once and refuses it again from memory; B, which
            // keeps no record of reads, answers it within the window as it would answer its signer
            // (RELAY.md, "Replayed reads"): the same rows, nothing more.
            let headers = d1.signedHeaders(method: "GET", path: path, query: "after=0", body: [])
            let first = try await f.a.send("GET", path, query: "after=0", as: d1, signed: headers)
            #expect(first.status == 200)
            let replayed = try await f.a.send("GET", path, query: "after=0", as: d1, signed: headers)
            #expect(replayed.status == 401)
            #expect(replayed.refusal?.reason.contains("nonce") == true)
            let elsewhere = try await f.b.send("GET", path, query: "after=0", as: d1, signed: headers)
            #expect(elsewhere.status == 200)
            #expect(elsewhere.text == first.text)
            // A write spends its nonce in the store: sent again, it is refused by both instances and not stored twice.
            let write = d1.signedHeaders(method: "POST", path: path, query: "", body: share)
            #expect(try await f.a.send("POST", path, body: share, as: d1, signed: write).status == 200)
            let replayedWrite = try await f.b.send("POST", path, body: share, as: d1, signed: write)
            #expect(replayedWrite.status == 401)
            #expect(replayedWrite.refusal?.reason.contains("nonce") == true)
            #expect(try await f.a.send("POST", path, body: share, as: d1, signed: write).status == 401)

            let now = Int64(Date().timeIntervalSince1970)
            for created in [now - 120, now + 120] {
                let stale = d1.signedHeaders(method: "GET", path: path, query: "after=0", body: [], created: created)
                let answer = try await f.a.send("GET", path, query: "after=0", as: d1, signed: stale)
                #expect(answer.status == 401)
                #expect(answer.refusal?.reason.contains("created") == true)
            }

            let other = JSONBody.encode(RelayWire.Publish(records: [RelayWire.Record(.share(account: try AccountID(validating: account),
                                                                                            recipient: d1.id, sealed: Random.bytes(100)))]))
            let digestFor = d1.signedHeaders(method: "POST", path: path, query: "", body: share)
            let badDigest = try await f.b.send("POST", path, body: other, as: d1, signed: digestFor)
            #expect(badDigest.status == 401)
            #expect(badDigest.refusal?.reason.contains("Content-Digest") == true)
            // Signed over another query than the one sent: it does not verify with the member's key, and is
            // answered as the same request to an account that does not exist is, byte for byte.
            let otherQuery = d1.signedHeaders(method: "GET", path: path, query: "after=5", body: [])
            let mismatched = try await f.a.send("GET", path, query: "after=0", as: d1, signed: otherQuery)
            #expect(mismatched.status == 403)
            let absentPath = "/v1/accounts/nobody-here/records"
            let absent = try await f.a.send("GET", absentPath, query: "after=0", as: d1,
                                            signed: d1.signedHeaders(method: "GET", path: absentPath, query: "after=5", body: []))
            #expect(absent.status == 403)
            #expect(absent.text == mismatched.text)

            // Over 1 MiB: too large, whoever signs it.
            let huge = [UInt8](repeating: 0x20, count: (1 << 20) + 10)
            let tooLarge = try await f.a.send("POST", path, body: huge, as: d1)
            #expect(tooLarge.status == 413)
            #expect(tooLarge.refusal?.error == "too-large")

            // Only the one accepted write landed.
            let after = try await f.b.rows(account, as: d1)
            #expect(after.count == before.count + 1)
            #expect(Array(after.prefix(before.count)) == before)
        }
    }

    /// The store goes away: reads, writes and health answer 503 `unavailable` with Retry-After, never 500
    /// and never a refusal that blames the device, and at once once the instance has seen it fail; when it
    /// is back, the same requests succeed.
    @Test func storeOutageAnswersUnavailable() async throws {
        try await RelayServiceFixture.with(.service) { f in
            let (first, _) = try await f.createAccount("olga")
            try await OutageTests.cluster("stop")
            do {
                // A write on one instance and a read on the other wait out the store's deadline (5 s) side by side.
                async let writing = f.b.publish("olga", [.share(account: try AccountID(validating: "olga"), recipient: first.id,
                                                                  sealed: Random.bytes(100))], as: first)
                let read = try await f.a.read("olga", as: first)
                #expect(read.status == 503)
                #expect(read.refusal?.error == "unavailable")
                #expect(read.retryAfter == "1")
                // A has seen the store fail: its next answers come at once (within the breaker's second), not after the deadline.
                let asked = ContinuousClock.now
                #expect(try await f.a.send("GET", "/v1/health", as: nil).status == 503)
                let again = try await f.a.read("olga", as: first)
                #expect(again.status == 503)
                #expect(ContinuousClock.now - asked < .seconds(1))
                #expect(try await writing.status == 503)
            } catch {
                try await OutageTests.cluster("start")
                throw error
            }
            try await OutageTests.cluster("start")
            let deadline = ContinuousClock.now + .seconds(20)
            while try await f.a.send("GET", "/v1/health", as: nil).status != 200, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(try await f.a.rows("olga", as: first).count == 1)
        }
    }

    /// TLS from PEM files: health over HTTPS. A key set over plain HTTP from elsewhere, and a missing transport,
    /// stop the start with a reason.
    @Test func startsWithTLSAndRefusesWhatItCannotDo() async throws {
        var template = Array("/tmp/kvrelay-XXXXXX".utf8CString)
        let root = String(cString: try #require(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: root) }
        let issuer = try await TestIssuer.make(in: root)
        let made = try await run("/usr/bin/openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                                                      "-keyout", root + "/key.pem", "-out", root + "/cert.pem", "-days", "1",
                                                      "-subj", "/CN=127.0.0.1"])
        #expect(made.status == 0, "openssl: \(made.err)")
        let (relay, port) = try await Self.startRelay(["--store", "sqlite:" + root + "/relay.sqlite", "--listen", "127.0.0.1:0",
                                                       "--tls-cert", root + "/cert.pem", "--tls-key", root + "/key.pem"] + issuer.relayArguments,
                                                      log: root + "/tls.log")
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(certificateVerification: .none))
        do {
            let response = try await client.execute(HTTPClientRequest(url: "https://127.0.0.1:\(port)/v1/health"), timeout: .seconds(10))
            #expect(response.status.code == 200)
            let body = try await response.body.collect(upTo: 1024)
            #expect(String(buffer: body) == #"{"state":"ready"}"#)
        } catch {
            try await client.shutdown()
            relay.signal(SIGKILL)
            _ = await relay.wait()
            throw error
        }
        try await client.shutdown()
        relay.signal(SIGTERM)
        #expect(await relay.wait() == 0)

        let binary = DaemonProcess.binaryDirectory + "/keyvault-relay"
        let common = ["--store", "sqlite:" + root + "/relay.sqlite", "--listen", "127.0.0.1:0",
                      "--identity-issuer", TestIssuer.issuer, "--identity-audience", TestIssuer.audience]
        let plain = try await run(binary, common + ["--plain-http", "--identity-jwks", "http://issuer.example/keys"])
        #expect(plain.status != 0)
        #expect(plain.err.contains("https://"), "\(plain.err)")
        let wrapped = try await run(binary, common + ["--plain-http", "--identity-jwks", "http://127.0.0.1:65536/keys"])
        #expect(wrapped.status != 0)
        #expect(wrapped.err.contains("port is a number from 1 to 65535"), "\(wrapped.err)")
        let neither = try await run(binary, common + ["--identity-jwks", issuer.jwksPath])
        #expect(neither.status != 0)
        #expect(neither.err.contains("--plain-http"), "\(neither.err)")
    }

    /// The issuer's key set fetched from a URL at start (here over HTTP from this machine): its tokens are
    /// accepted, others' refused; a URL that answers 404 stops the start with a reason.
    @Test func identityKeysFromAURL() async throws {
        var template = Array("/tmp/kvrelay-XXXXXX".utf8CString)
        let root = String(cString: try #require(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: root) }
        let issuer = try await TestIssuer.make(in: root)
        let (server, port) = try await Self.serveFolder(root)
        defer { server.killAndReap() }
        let missing = try await run(DaemonProcess.binaryDirectory + "/keyvault-relay", [
            "--store", "sqlite:" + root + "/relay.sqlite", "--listen", "127.0.0.1:0", "--plain-http",
            "--identity-issuer", TestIssuer.issuer, "--identity-audience", TestIssuer.audience,
            "--identity-jwks", "http://127.0.0.1:\(port)/missing.json"])
        #expect(missing.status != 0)
        #expect(missing.err.contains("answered 404"), "\(missing.err)")
        let (process, relayPort) = try await Self.startRelay([
            "--store", "sqlite:" + root + "/relay.sqlite", "--listen", "127.0.0.1:0", "--plain-http",
            "--identity-issuer", TestIssuer.issuer, "--identity-audience", TestIssuer.audience,
            "--identity-jwks", "http://127.0.0.1:\(port)/jwks.json"], log: root + "/relay.log")
        let relay = RelayServiceProcess(attaching: process, port: relayPort, logPath: root + "/relay.log")
        do {
            let device = TestDevice()
            let filed = try await relay.candidacy("ursula", device, token: try await issuer.token(for: "ursula", device: device))
            #expect(filed.status == 200, "\(filed.text)")
            let wrong = TestDevice()
            let refused = try await relay.candidacy("ursula", wrong, token: try await issuer.token(for: "ursula", device: wrong, wronglySigned: true))
            #expect(refused.status == 401)
        } catch {
            process.signal(SIGKILL)
            _ = await process.wait()
            throw error
        }
        #expect(await relay.stop() == 0)
    }

    /// Serves `root` over plain HTTP on loopback (python's http.server), as an issuer's key set URL: the process and its port.
    static func serveFolder(_ root: String) async throws -> (ChildProcess, Int) {
        let served = root + "/http.log"
        let server = try ChildProcess("/usr/bin/python3", ["-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory", root],
                                      stdoutPath: served, stderrPath: served)
        for _ in 0..<400 where server.isRunning {
            let text = (try? String(contentsOfFile: served, encoding: .utf8)) ?? ""
            if let range = text.range(of: " port "), let port = Int(text[range.upperBound...].prefix { $0.isNumber }) { return (server, port) }
            try await Task.sleep(for: .milliseconds(25))
        }
        server.signal(SIGKILL)
        _ = await server.wait()
        throw TestFailure("python's http.server did not start")
    }

    /// Starts `keyvault-relay` with these arguments and waits for its listening line; the process and its port.
    static func startRelay(_ arguments: [String], log: String) async throws -> (ChildProcess, Int) {
        let process = try ChildProcess(DaemonProcess.binaryDirectory + "/keyvault-relay", arguments, stdoutPath: log, stderrPath: log)
        for _ in 0..<1200 where process.isRunning {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("listening on ") }),
               let port = line.split(separator: ":").last.flatMap({ Int($0) }) {
                return (process, port)
            }
            try await Task.sleep(for: .milliseconds(25))
        }
        process.signal(SIGKILL)
        _ = await process.wait()
        throw TestFailure("keyvault-relay did not start: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
    }

    /// 1,000 candidacies for X with no valid token (on both instances) count for nothing: a genuine device
    /// still becomes a candidate and makes the account. Then the bounds: 8 live candidates, 60 an hour.
    @Test func junkCannotCrowdOutAGenuineDevice() async throws {
        try await RelayServiceFixture.with(.service) { f in
            let account = "erin"
            let someoneElse = TestDevice()
            let junkToken = try await f.issuer.token(for: account, device: someoneElse)
            try await withThrowingTaskGroup(of: Int.self) { group in
                for worker in 0..<16 {
                    group.addTask {
                        var refused = 0
                        for n in 0..<(1000 / 16 + (worker < 1000 % 16 ? 1 : 0)) {
                            let device = TestDevice()
                            let relay = (worker + n) % 2 == 0 ? f.a : f.b
                            let answer = try await relay.candidacy(account, device, token: n % 3 == 0 ? "junk.junk.junk" : junkToken)
                            if answer.status == 401 { refused += 1 }
                        }
                        return refused
                    }
                }
                var refused = 0
                for try await count in group { refused += count }
                #expect(refused == 1000)
            }
            let (first, _) = try await f.createAccount(account, on: f.b)
            #expect(try await f.a.rows(account, as: first).count == 1)

            // Eight live candidates: the ninth filing evicts the oldest, which may no longer read.
            var candidates: [TestDevice] = []
            for _ in 0..<9 {
                let device = TestDevice()
                #expect(try await f.a.candidacy(account, device, token: try await f.issuer.token(for: account, device: device)).status == 200)
                candidates.append(device)
                try await Task.sleep(for: .milliseconds(3))  // distinct filing times
            }
            // The first device's own candidacy was the first of all; it is a member now, so it still reads.
            #expect(try await f.a.read(account, as: candidates[0]).status == 403)
            #expect(try await f.b.read(account, as: candidates[8]).status == 200)
            #expect(try await f.b.read(account, as: candidates[1]).status == 200)

            // Sixty accepted an hour (first's own and the nine so far count): the sixty-first is refused.
            for _ in 0..<50 {
                let device = TestDevice()
                #expect(try await f.b.candidacy(account, device, token: try await f.issuer.token(for: account, device: device)).status == 200)
            }
            let device = TestDevice()
            let tooMany = try await f.a.candidacy(account, device, token: try await f.issuer.token(for: account, device: device))
            #expect(tooMany.status == 429)
            #expect(tooMany.refusal?.error == "too-many")
        }
    }
}
