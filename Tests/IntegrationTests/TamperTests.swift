import Foundation
import KeyVault
import KeyVaultEngine
import KeyVaultPolicy
import Testing
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultAccount
import KeyVaultVault
import KeyVaultRelay
import KeyVaultRelaySQLite
import KeyVaultRelayClient
import KeyVaultRelayStore

/// The test plays the untrusted relay: it injects, changes, replays and
/// deletes records in the relay file. Each is refused and logged; no daemon
/// trusts an injected device or serves a changed key.
@Suite("A tampering relay")
struct TamperTests {
    static func logEntries(_ relay: any Relay, account: String) async throws -> [(cursor: RelayCursor, entry: LogEntry)] {
        try await relay.rows(after: 0, limit: 1000).filter { $0.record.kind == .log && $0.record.account.rawValue == account }
            .map { ($0.cursor, try LogEntry.decode($0.record.body)) }
    }

    static func refusals(_ daemon: DaemonProcess) -> Int {
        daemon.logText().components(separatedBy: "refused relay record").count - 1
    }

    @Test("an injected device, approved by a key the circle does not trust, is refused", arguments: RelayKind.allCases)
    func injectedDevice(_ relay: RelayKind) async throws {
        let circle = try await Circle(relay)
        defer { circle.remove() }
        let a = try await circle.device()
        _ = try await a.request("POST", "/v1/accounts", json: ["user": "t1", "passphrase": "pa"])
        let relay = try await circle.store.open()
        let genesis = try #require(try await Self.logEntries(relay, account: "t1").first?.entry)

        let outsider = SigningKey.generate()
        let box = BoxSecretKey.generate()
        let keys = DeviceKeys(signing: outsider.publicKey, box: box.publicKey, name: "intruder")
        let forged = LogEntry.make(account: try AccountID(validating: "t1"), seq: 1, previousHash: genesis.hash, signer: outsider,
                                   signerID: keys.deviceID, body: .approve(device: keys, requestHash: RequestHash(computed: Random.bytes(32))), at: Date())
        try await relay.publish(.log(forged))

        try await eventually { Self.refusals(a) >= 1 }
        #expect(a.logText().contains("does not trust"))
        let devices = try await a.request("GET", "/v1/accounts/t1/devices").object["devices"] as? [[String: Any]] ?? []
        #expect(devices.count == 1)
        #expect(!devices.contains { $0["deviceId"] as? String == keys.deviceID.hex })
    }

    @Test("a forged entry holding the log's next number: a rotation says the relay's log does not verify, not that the relay is unreachable", arguments: RelayKind.allCases)
    func takenLogNumber(_ relay: RelayKind) async throws {
        let circle = try await Circle(relay)
        defer { circle.remove() }
        let a = try await circle.device()
        _ = try await a.request("POST", "/v1/accounts", json: ["user": "t9", "passphrase": "pa"])
        let relay = try await circle.store.open()
        let genesis = try #require(try await Self.logEntries(relay, account: "t9").first?.entry)
        let outsider = SigningKey.generate()
        let keys = DeviceKeys(signing: outsider.publicKey, box: BoxSecretKey.generate().publicKey, name: "squatter")
        let forged = LogEntry.make(account: try AccountID(validating: "t9"), seq: 1, previousHash: genesis.hash, signer: outsider,
                                   signerID: keys.deviceID, body: .approve(device: keys, requestHash: RequestHash(computed: Random.bytes(32))), at: Date())
        try await relay.publish(.log(forged))
        try await eventually { Self.refusals(a) >= 1 }

        let rotated = try await a.request("POST", "/v1/accounts/t9/rotate", json: ["promote": "now"])
        #expect(rotated.status == 200, "\(rotated.object)")
        #expect(rotated.object["queued"] as? Bool == true)
        let note = rotated["note"] ?? ""
        #expect(note.contains("entry 1") && note.contains("does not verify"), "\(rotated.object)")
        #expect(!note.contains("unreachable"), "\(note)")
        let status = try await a.request("GET", "/v1/status").object["relay"] as? [String: Any]
        #expect(status?["state"] as? String == "reachable", "\(String(describing: status))")
        // Served here all the same.
        #expect(try await a.request("GET", "/v1/accounts/t9/keys/current").object["generation"] as? Int == 2)
    }

    @Test("a changed share, and shares signed by unapproved devices, are refused; no changed key is served", arguments: RelayKind.allCases)
    func badShares(_ relay: RelayKind) async throws {
        let circle = try await Circle(relay)
        defer { circle.remove() }
        let a = try await circle.device()
        let b = try await circle.device()
        _ = try await a.request("POST", "/v1/accounts", json: ["user": "t2", "passphrase": "pa"])
        let deviceB = try await circle.enroll(b, into: "t2", approver: a, name: "b")
        #expect(try await b.request("GET", "/v1/accounts/t2/keys/1?wait=20").state == "ready")
        // Stopped, B has not read the rotation's share yet, so the test can change it first.
        #expect(await b.stop() == 0)
        #expect(try await a.request("POST", "/v1/accounts/t2/rotate", json: ["promote": "now"]).status == 200)

        let relay = try await circle.store.open()
        let share = try #require(try await relay.rows(after: 0, limit: 1000).last { $0.record.kind == .share && $0.record.recipient?.hex == deviceB })
        var changed = share.record
        changed.body[changed.body.count / 2] ^= 0x01
        try await circle.store.sql("DELETE FROM \(circle.store.table) WHERE account = 't2' AND cursor = \(share.cursor)")
        try await relay.publish(changed)

        // Shares from a device outside the circle: under its own ID, and claiming to be A.
        let account = try AccountID(validating: "t2")
        let outsider = SigningKey.generate()
        let outsiderID = DeviceKeys(signing: outsider.publicKey, box: BoxSecretKey.generate().publicKey, name: "x").deviceID
        let entries = try await Self.logEntries(relay, account: "t2")
        guard case .approve(let bKeys, _) = entries[1].entry.body, case .genesis(let aKeys, _, _, _) = entries[0].entry.body else {
            Issue.record("unexpected log")
            return
        }
        let fakeKey = SecretKey.generate()
        for sender in [outsiderID, aKeys.deviceID] {
            let fake = KeyShare(header: .init(account: account, generation: 2, keyID: KeyID(of: fakeKey),
                                              createdAt: Date(), sender: sender, recipient: DeviceID(testHex: deviceB)), key: fakeKey)
            try await relay.publish(.share(account: account, recipient: DeviceID(testHex: deviceB), sealed: fake.seal(signer: outsider, to: bKeys.box)))
        }

        try await b.start()
        #expect(try await b.request("POST", "/v1/accounts/t2/unlock", json: ["passphrase": "device passphrase"]).status == 200)
        try await eventually { Self.refusals(b) >= 3 }
        let read = try await b.request("GET", "/v1/accounts/t2/keys/2")
        #expect(read.status == 202, "\(read.object)")
        #expect(read["reason"] == "awaiting-delivery")
        #expect(read["key"] == nil)
        #expect(b.logText().components(separatedBy: "key received").count == 2, "only generation 1 was received")
    }

    @Test("a replayed entry changes nothing; a changed copy is a fork; a deleted entry leaves a gap that is refused", arguments: RelayKind.allCases)
    func replayForkAndGap(_ relay: RelayKind) async throws {
        let circle = try await Circle(relay)
        defer { circle.remove() }
        let a = try await circle.device()
        let b = try await circle.device()
        _ = try await a.request("POST", "/v1/accounts", json: ["user": "t3", "passphrase": "pa"])
        try await circle.enroll(b, into: "t3", approver: a, name: "b")
        let key = try await b.request("GET", "/v1/accounts/t3/keys/current?wait=20")["key"]
        #expect(key != nil)

        // Replay: the genesis row again, at a new place in the relay's order.
        // (On PostgreSQL the account numbers its own cursors: the row takes the account's next one.)
        try await circle.store.sql(circle.store.kind == .sqlite
            ? "INSERT INTO records (kind, account, recipient, log_seq, body, created_at) SELECT kind, account, recipient, NULL, body, created_at FROM records WHERE kind = 'log' AND log_seq = 0"
            : "WITH next AS (UPDATE keyvault_account_cursors SET last = last + 1 WHERE account = 't3' RETURNING last) INSERT INTO keyvault_records (cursor, kind, account, recipient, log_seq, body, created_at) SELECT next.last, kind, account, recipient, NULL, body, created_at FROM keyvault_records, next WHERE kind = 'log' AND log_seq = 0 AND keyvault_records.account = 't3'")
        // Fork: entry 1 with one byte of the new device's name changed.
        let relay = try await circle.store.open()
        let approveRow = try #require(try await relay.rows(after: 0, limit: 1000).first { $0.record.kind == .log && $0.record.logSeq == 1 })
        var forked = approveRow.record
        forked.logSeq = 7
        if let index = forked.body.lastIndex(of: UInt8(ascii: "b")) { forked.body[index] = UInt8(ascii: "c") }
        try await relay.publish(forked)
        try await eventually { Self.refusals(a) >= 1 && Self.refusals(b) >= 1 }
        #expect(try await b.request("GET", "/v1/accounts/t3/keys/current")["key"] == key)
        #expect((try await a.request("GET", "/v1/accounts/t3/devices").object["devices"] as? [Any])?.count == 2)

        // Delete entry 1 from the relay; a new device then sees entry 2 after entry 0: a gap.
        try await circle.store.sql("DELETE FROM \(circle.store.table) WHERE kind = 'log' AND (log_seq = 1 OR log_seq = 7)")
        let c = try await circle.device()
        let ticket = try await c.request("POST", "/v1/accounts/t3/enroll", json: ["passphrase": "pc", "deviceName": "c"])
        try await eventually { (try await a.request("GET", "/v1/accounts/t3/enrollments").object["enrollments"] as? [Any])?.count == 1 }
        #expect(try await a.request("POST", "/v1/accounts/t3/enrollments/\(ticket["deviceId"]!)/approve", json: ["pairingCode": ticket["pairingCode"]!]).status == 200)
        try await eventually { c.logText().contains("gap") }
        let read = try await c.request("GET", "/v1/accounts/t3/keys/current")
        #expect(read["reason"] == "awaiting-approval")
        #expect(read["key"] == nil)
    }
}

@Suite("A relay that substitutes an enrollment request")
struct SubstitutionTests {
    /// The relay shows the trusted device its own request, with its own keys,
    /// and plays the new device's side of the exchange with a guessed code. The
    /// code the person reads on the real new device, typed for the impostor,
    /// fails the exchange (`Ta` cannot be made without the code): one online
    /// guess, for the one code typed.
    @Test("the code shown on the real device does not approve the relay's impostor", arguments: RelayKind.allCases)
    func impostorRequest(_ relay: RelayKind) async throws {
        let circle = try await Circle(relay)
        defer { circle.remove() }
        let a = try await circle.device()
        let b = try await circle.device()
        _ = try await a.request("POST", "/v1/accounts", json: ["user": "t4", "passphrase": "pa"])
        let ticket = try await b.request("POST", "/v1/accounts/t4/enroll", json: ["passphrase": "pb", "deviceName": "phone"])
        let code = try #require(ticket["pairingCode"])

        let relay = try await circle.store.open()
        let account = try AccountID(validating: "t4")
        let genesis = try #require(try await TamperTests.logEntries(relay, account: "t4").first?.entry)
        let impostorKey = SigningKey.generate()
        let impostor = DeviceKeys(signing: impostorKey.publicKey, box: BoxSecretKey.generate().publicKey, name: "phone")
        let guess = code == "000000" ? "111111" : "000000"
        let started = try PairingRequest.make(account: account, device: impostor, signer: impostorKey, code: guess, headHash: genesis.hash, at: Date())
        let request = started.request
        try await relay.publish(.request(request))
        try await eventually { (try await a.request("GET", "/v1/accounts/t4/enrollments").object["enrollments"] as? [Any])?.count == 2 }

        // The person types the real code for the impostor; the relay answers A's response as best it can.
        let approving = Task { try await a.request("POST", "/v1/accounts/t4/enrollments/\(impostor.deviceID)/approve", json: ["pairingCode": code]) }
        var response: PairingResponse?
        for _ in 0..<500 where response == nil {
            for row in try await relay.rows(after: 0, limit: 1000) where row.record.kind == .challenge {
                var members = CircleState(account: account)
                for entry in try await TamperTests.logEntries(relay, account: "t4").map(\.entry) { try members.apply(entry) }
                if let r = try? PairingResponse.accept(row.record.body, in: members), r.requestHash == request.hash { response = r }
            }
            if response == nil { try await Task.sleep(for: .milliseconds(20)) }
        }
        let answered = try #require(response)
        var shown = CircleState(account: account)
        try shown.apply(genesis)
        switch Pairing.answer(answered, to: request, initiator: started.takeInitiator(), circle: shown, signer: impostorKey) {
        case .confirmed:
            Issue.record("the impostor's guess matched (one in a million)")
        case .mismatch:
            // Without the code it can only make up a tag.
            let forged = PairingConfirmation.make(request: request, response: answered, confirmation: Random.bytes(64), signer: impostorKey)
            try await relay.publish(.reveal(forged))
        }
        let refused = try await approving.value
        #expect(refused.status == 401, "\(refused.object)")
        #expect(refused["error"]?.contains("did not match") == true, "\(refused.object)")
        let devices = try await a.request("GET", "/v1/accounts/t4/devices").object["devices"] as? [[String: Any]] ?? []
        #expect(!devices.contains { $0["deviceId"] as? String == impostor.deviceID.hex && $0["status"] as? String == "trusted" })
        // One guess per code typed: the same code for the impostor again is refused without an exchange.
        let again = try await a.request("POST", "/v1/accounts/t4/enrollments/\(impostor.deviceID)/approve", json: ["pairingCode": code])
        #expect(again.status == 401 && again["error"]?.contains("already tried") == true, "\(again.object)")
        #expect(try await relay.rows(after: 0, limit: 1000).filter { $0.record.kind == .challenge }.count == 1, "one response, one online guess")
        // The real device, with its code, is approved.
        #expect(try await a.request("POST", "/v1/accounts/t4/enrollments/\(ticket["deviceId"]!)/approve", json: ["pairingCode": code]).status == 200)
    }
}

/// docs/PAIRING.md, "What the relay can do": a relay that shows a new device a
/// circle of its own making (its own genesis and "trusted device" for the
/// account ID), answers the request with a guessed code, approves the device
/// in its log and sends it a share, gets nothing: the new device never becomes
/// `ready` and says why. When the relay stops lying, the real trusted device,
/// given the real code, enrolls it.
@Suite("A relay that fabricates a circle")
struct FabricatedCircleTests {
    @Test("the new device never joins the relay's circle; the real trusted device, with the real code, enrolls it")
    func fabricatedCircle() async throws {
        let circle = try await Circle(.sqlite)
        defer { circle.remove() }
        let a = try await circle.device()
        _ = try await a.request("POST", "/v1/accounts", json: ["user": "victim", "passphrase": "pa"])
        let key = try #require(try await a.request("GET", "/v1/accounts/victim/keys/current")["key"])

        // The lying relay: a file of its own, holding its own genesis for the same account ID.
        let account = try AccountID(validating: "victim")
        let fakePath = circle.root + "/fake-relay.sqlite"
        let fake = try SQLiteRelay(path: fakePath)
        let liar = SigningKey.generate()
        let liarKeys = DeviceKeys(signing: liar.publicKey, box: BoxSecretKey.generate().publicKey, name: "laptop")
        let liarKey = SecretKey.generate()
        var made = CircleState(account: account)
        let genesis = made.nextEntry(.genesis(device: liarKeys, generation: 1, keyID: KeyID(of: liarKey),
                                              keyCreatedAt: UInt64(Date().timeIntervalSince1970 * 1000)),
                                     signer: liar, signerID: liarKeys.deviceID, at: Date())
        try made.apply(genesis)
        try await fake.publish(.log(genesis))

        let b = try DaemonProcess(relay: "sqlite:" + fakePath)
        defer { b.remove() }
        try await b.start()
        let ticket = try await b.request("POST", "/v1/accounts/victim/enroll", json: ["passphrase": "pb", "deviceName": "phone"])
        let deviceB = try #require(ticket["deviceId"]), code = try #require(ticket["pairingCode"])

        // The liar answers with a guessed code, approves B in its log, authenticates that as best it can, and sends a share.
        let requestRow = try #require(try await fake.rows(account: account, after: 0, limit: 100).first { $0.record.kind == .request })
        let request = try PairingRequest.decode(requestRow.record.body)
        let guess = code == "000000" ? "111111" : "000000"
        let answering = try PairingResponse.make(to: request, code: guess, responder: liarKeys.deviceID, signer: liar, circle: made)
        try await fake.publish(.challenge(answering.response))
        let approve = made.nextEntry(.approve(device: request.device, requestHash: request.hash), signer: liar, signerID: liarKeys.deviceID, at: Date())
        try made.apply(approve)
        let approval = PairingApproval.make(entry: approve, request: request, genesisHash: genesis.hash,
                                            sessionKey: CPace.SessionKey(bytes: SecureBytes(randomCount: 64)), signer: liar)
        let current = try #require(made.current)
        let header = KeyShare.Header(account: account, generation: 1, keyID: current.keyID, createdAt: current.createdAt,
                                     sender: liarKeys.deviceID, recipient: DeviceID(testHex: deviceB))
        let sealed = KeyShare(header: header, key: liarKey).seal(signer: liar, to: request.device.box)
        try await fake.publish(batch: [.log(approve), .challenge(approval), .share(account: account, recipient: DeviceID(testHex: deviceB), sealed: sealed)])

        // B says why it is not joining, and never serves the liar's key.
        try await eventually { try await b.request("GET", "/v1/accounts/victim/keys/current")["reason"] == "code-mismatch" }
        try await Task.sleep(for: .milliseconds(500))
        let stillPending = try await b.request("GET", "/v1/accounts/victim/keys/current")
        #expect(stillPending.status == 202 && stillPending["reason"] == "code-mismatch", "\(stillPending.object)")
        #expect(try await b.request("GET", "/v1/accounts/victim/keys/1").status == 202)
        let refusal = try #require(try await fake.rows(account: account, after: 0, limit: 100).first { $0.record.kind == .reveal })
        #expect(try PairingConfirmation.decode(refusal.record.body, request: request).isRefusal, "B said the code did not match")

        // The relay stops lying (B reaches the real one); asked again, B reads the real circle and the real device enrolls it.
        #expect(await b.stop() == 0)
        b.relays = [circle.relay]
        try await b.start()
        #expect(try await b.request("POST", "/v1/accounts/victim/unlock", json: ["passphrase": "pb"]).status == 200)
        let again = try await b.request("POST", "/v1/accounts/victim/enroll", json: ["passphrase": "pb", "deviceName": "phone"])
        #expect(again["deviceId"] == deviceB)
        let realCode = try #require(again["pairingCode"])
        try await eventually {
            let list = try await a.request("GET", "/v1/accounts/victim/enrollments").object["enrollments"] as? [[String: Any]] ?? []
            return list.contains { $0["deviceId"] as? String == deviceB }
        }
        let approved = try await a.request("POST", "/v1/accounts/victim/enrollments/\(deviceB)/approve", json: ["pairingCode": realCode])
        #expect(approved.status == 200, "\(approved.object)")
        let joined = try await b.request("GET", "/v1/accounts/victim/keys/current?wait=20")
        #expect(joined["key"] == key, "\(joined.object); B: \(b.logText().suffix(6000))")
        #expect(joined["key"] != liarKey.base64EncodedString())
    }
}
