import Foundation
import KeyVault
import Testing
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultStore

/// The test plays the untrusted relay: it injects, changes, replays and
/// deletes records in the relay file. Each is refused and logged; no daemon
/// trusts an injected device or serves a changed key.
@Suite("A tampering relay")
struct TamperTests {
    static func logEntries(_ relay: any Relay, account: String) async throws -> [(cursor: Int64, entry: LogEntry)] {
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
                                   signerID: keys.deviceID, body: .approve(device: keys, requestHash: Random.bytes(32)), at: Date())
        try await relay.publish(.log(forged))

        try await eventually { Self.refusals(a) >= 1 }
        #expect(a.logText().contains("does not trust"))
        let devices = try await a.request("GET", "/v1/accounts/t1/devices").object["devices"] as? [[String: Any]] ?? []
        #expect(devices.count == 1)
        #expect(!devices.contains { $0["deviceId"] as? String == keys.deviceID })
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
                                   signerID: keys.deviceID, body: .approve(device: keys, requestHash: Random.bytes(32)), at: Date())
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
        let ticket = try await b.request("POST", "/v1/accounts/t2/enroll", json: ["passphrase": "pb", "deviceName": "b"])
        let deviceB = try #require(ticket["deviceId"])
        // Stopped, B has not read its shares yet, so the test can change them first.
        #expect(await b.stop() == 0)
        try await eventually { (try await a.request("GET", "/v1/accounts/t2/enrollments").object["enrollments"] as? [Any])?.count == 1 }
        #expect(try await a.request("POST", "/v1/accounts/t2/enrollments/\(deviceB)/approve", json: ["pairingCode": ticket["pairingCode"]!]).status == 200)

        let relay = try await circle.store.open()
        let share = try #require(try await relay.rows(after: 0, limit: 1000).first { $0.record.kind == .share })
        var changed = share.record
        changed.body[changed.body.count / 2] ^= 0x01
        try await circle.store.sql("DELETE FROM \(circle.store.table) WHERE cursor = \(share.cursor)")
        try await relay.publish(changed)

        // Shares from a device outside the circle: under its own ID, and claiming to be A.
        let account = try AccountID(validating: "t2")
        let outsider = SigningKey.generate()
        let outsiderID = DeviceKeys(signing: outsider.publicKey, box: BoxSecretKey.generate().publicKey, name: "x").deviceID
        let entries = try await Self.logEntries(relay, account: "t2")
        guard case .approve(let bKeys, _) = entries.last!.entry.body, case .genesis(let aKeys, _, _, _) = entries[0].entry.body else {
            Issue.record("unexpected log")
            return
        }
        let fakeKey = SecretKey.generate()
        for sender in [outsiderID, aKeys.deviceID] {
            let fake = KeyShare(header: .init(account: account, generation: 1, keyID: Hex.encode(fakeKey.keyID(label: Labels.keyID)),
                                              createdAt: Date(), sender: sender, recipient: deviceB), key: fakeKey)
            try await relay.publish(.share(account: account, recipient: deviceB, sealed: fake.seal(signer: outsider, to: bKeys.box)))
        }

        try await b.start()
        #expect(try await b.request("POST", "/v1/accounts/t2/unlock", json: ["passphrase": "pb"]).status == 200)
        try await eventually { Self.refusals(b) >= 3 }
        let read = try await b.request("GET", "/v1/accounts/t2/keys/current")
        #expect(read.status == 202, "\(read.object)")
        #expect(read["reason"] == "awaiting-delivery")
        #expect(read["key"] == nil)
        #expect(!b.logText().contains("key received"))
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
    /// and answers the challenge. It had to commit to its secret before the
    /// challenge, so the code the person reads on the real new device does
    /// not approve it.
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
        let secret = Random.bytes(32)
        let request = EnrollmentRequest.make(account: account, device: impostor, signer: impostorKey, headHash: genesis.hash, secret: secret, at: Date())
        try await relay.publish(.request(request))

        // A answers the impostor's request with a challenge; the impostor reveals.
        var answered: EnrollmentChallenge?
        for _ in 0..<200 where answered == nil {
            for row in try await relay.rows(after: 0, limit: 1000) where row.record.kind == .challenge {
                let members = try await TamperTests.logEntries(relay, account: "t4").map(\.entry)
                guard case .genesis(let aKeys, _, _, _) = members[0].body else { continue }
                if let c = try? EnrollmentChallenge.decode(row.record.body, key: { _ in aKeys.signing }), c.requestHash == request.hash { answered = c }
            }
            if answered == nil { try await Task.sleep(for: .milliseconds(20)) }
        }
        let impostorChallenge = try #require(answered)
        try await relay.publish(.reveal(.make(request: request, challenge: impostorChallenge, secret: secret, signer: impostorKey)))
        let impostorCode = PairingCode.derive(requestHash: request.hash, challenge: impostorChallenge.nonce, secret: secret)
        // One in a million: the impostor's code happens to equal the real one.
        try #require(impostorCode != code)

        try await Task.sleep(for: .milliseconds(200))
        let refused = try await a.request("POST", "/v1/accounts/t4/enrollments/\(impostor.deviceID)/approve", json: ["pairingCode": code])
        #expect(refused.status == 401, "\(refused.object)")
        let devices = try await a.request("GET", "/v1/accounts/t4/devices").object["devices"] as? [[String: Any]] ?? []
        #expect(!devices.contains { $0["deviceId"] as? String == impostor.deviceID && $0["status"] as? String == "trusted" })
        // The real device, with the same code, is approved.
        #expect(try await a.request("POST", "/v1/accounts/t4/enrollments/\(ticket["deviceId"]!)/approve", json: ["pairingCode": code]).status == 200)
    }
}
