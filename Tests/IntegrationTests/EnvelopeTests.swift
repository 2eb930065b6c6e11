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
import KeyVaultRelayClient
import KeyVaultRelayStore

/// seal and open over the socket: `items` in, envelopes or plaintexts out.
/// Items are (plaintext, aad as text or nil).
private func sealBatch(_ daemon: DaemonProcess, _ account: String, _ items: [([UInt8], String?)], keyId: String? = nil) async throws -> Reply {
    var body: [String: Any] = ["items": items.map { item -> [String: String] in
        var out = ["plaintext": Base64.encode(item.0)]
        out["aad"] = item.1.map { Base64.encode(Array($0.utf8)) }
        return out
    }]
    body["keyId"] = keyId
    return try await daemon.request("POST", "/v1/accounts/\(account)/seal", json: body)
}

/// Items are (envelope in base64, aad as text or nil).
private func openBatch(_ daemon: DaemonProcess, _ account: String, _ items: [(String, String?)]) async throws -> Reply {
    try await daemon.request("POST", "/v1/accounts/\(account)/open", json: ["items": items.map { item -> [String: String] in
        var out = ["envelope": item.0]
        out["aad"] = item.1.map { Base64.encode(Array($0.utf8)) }
        return out
    }])
}

private func list(_ reply: Reply, _ field: String) -> [String] { reply.object[field] as? [String] ?? [] }

private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// An envelope with one bit of byte `index` flipped.
private func flip(_ envelope: String, at index: Int) throws -> String {
    var raw = try #require(Base64.decode(envelope))
    raw[index] ^= 0x01
    return Base64.encode(raw)
}

@Suite("seal and open: envelopes under the account's key, over the socket")
struct EnvelopeTests {
    @Test("a batch seals under the current key and opens back, item for item; the envelope is the documented format")
    func roundTrip() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        try await daemon.start()
        #expect(try await daemon.request("POST", "/v1/accounts", json: ["user": "alice", "passphrase": "pw"]).status == 200)
        let current = try await daemon.request("GET", "/v1/accounts/alice/keys/current")
        let key = try SecretKey(rawRepresentation: try #require(current["key"].flatMap(Base64.decode)))

        let plaintexts: [[UInt8]] = [bytes("first item"), [0, 255, 1, 254], [], Array(repeating: 7, count: 4000)]
        let aads: [String?] = ["note/1", nil, "", "note/4"]
        let sealed = try await sealBatch(daemon, "alice", Array(zip(plaintexts, aads)))
        #expect(sealed.status == 200, "\(sealed.object)")
        #expect(sealed.state == "ready")
        #expect(sealed["account"] == "alice")
        #expect(sealed.object["generation"] as? Int == 1)
        #expect(sealed["keyId"] == current["keyId"])
        let envelopes = list(sealed, "envelopes")
        #expect(envelopes.count == 4)

        // Each one is FORMAT.md's envelope: it opens here, in-process, with the key a read gives.
        let alice = try AccountID(validating: "alice")
        for (index, text) in envelopes.enumerated() {
            let raw = try #require(Base64.decode(text))
            #expect(raw.count == plaintexts[index].count + 45)
            let envelope = try Envelope(parsing: raw)
            #expect(envelope.keyID.hex == current["keyId"])
            #expect(try envelope.open(key: key, account: alice, aad: bytes(aads[index] ?? "")) == plaintexts[index])
        }

        let opened = try await openBatch(daemon, "alice", Array(zip(envelopes, aads)))
        #expect(opened.status == 200, "\(opened.object)")
        #expect(list(opened, "plaintexts").map { Base64.decode($0) ?? [1] } == plaintexts)

        // A fresh nonce each time: the same plaintext never seals to the same envelope.
        let again = try await sealBatch(daemon, "alice", [(plaintexts[0], aads[0])])
        #expect(list(again, "envelopes").first != envelopes[0])
        // The plaintexts never reach the log; the audit line does.
        #expect(!daemon.logText().contains("first item"))
        #expect(!daemon.logText().contains(Base64.encode(plaintexts[0])))
        #expect(daemon.logText().contains("envelopes sealed"))
        #expect(daemon.logText().contains("envelopes opened"))
    }

    @Test("a changed byte, a wrong aad, a bad item: invalid, naming the item, and no plaintext")
    func refusalsNameTheItem() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        try await daemon.start()
        _ = try await daemon.request("POST", "/v1/accounts", json: ["user": "alice", "passphrase": "pw"])
        _ = try await daemon.request("POST", "/v1/accounts", json: ["user": "bob", "passphrase": "pw"])
        let envelopes = list(try await sealBatch(daemon, "alice", [(bytes("zero"), "a0"), (bytes("one"), "a1"), (bytes("two"), "a2")]), "envelopes")
        try #require(envelopes.count == 3)
        let good = Array(zip(envelopes, ["a0", "a1", "a2"] as [String?]))

        func expectInvalid(_ items: [(String, String?)], naming item: Int, _ words: String,
                           sourceLocation: SourceLocation = #_sourceLocation) async throws {
            let reply = try await openBatch(daemon, "alice", items)
            #expect(reply.status == 400, "\(reply.object)", sourceLocation: sourceLocation)
            #expect(reply.state == "invalid", sourceLocation: sourceLocation)
            #expect(reply["error"]?.hasPrefix("item \(item)") == true, "\(reply.object)", sourceLocation: sourceLocation)
            #expect(reply["error"]?.contains(words) == true, "\(reply.object)", sourceLocation: sourceLocation)
            #expect(reply.object["plaintexts"] == nil, sourceLocation: sourceLocation)
        }
        // Tampered: in the ciphertext, the tag, the nonce, the key ID (it is in the AAD too).
        for index in [30, 47, 20] {  // ciphertext, tag, nonce of a 48-byte envelope
            var items = good
            items[1].0 = try flip(envelopes[1], at: index)
            try await expectInvalid(items, naming: 1, "does not open")
        }
        // A changed key ID names a key this account never had.
        var renamed = good
        renamed[1].0 = try flip(envelopes[1], at: 5)
        let unknownKey = try await openBatch(daemon, "alice", renamed)
        #expect(unknownKey.state == "unknown")
        #expect(unknownKey["error"]?.hasPrefix("item 1:") == true, "\(unknownKey.object)")
        var wrongAAD = good
        wrongAAD[2].1 = "a1"
        try await expectInvalid(wrongAAD, naming: 2, "does not open")
        var missingAAD = good
        missingAAD[0].1 = nil
        try await expectInvalid(missingAAD, naming: 0, "does not open")
        var version = good
        version[2].0 = try flip(envelopes[2], at: 0)
        try await expectInvalid(version, naming: 2, "version")
        var short = good
        short[1].0 = Base64.encode(Array(try #require(Base64.decode(envelopes[1])).prefix(44)))
        try await expectInvalid(short, naming: 1, "shorter")
        var notBase64 = good
        notBase64[2].0 = "not base64!"
        try await expectInvalid(notBase64, naming: 2, "base64")
        let reply = try await daemon.request("POST", "/v1/accounts/alice/open", json: ["items": [
            ["envelope": envelopes[0], "aad": Base64.encode(bytes("a0"))], ["envelope": envelopes[1], "aad": "%%%"],
        ]])
        #expect(reply.state == "invalid")
        #expect(reply["error"]?.hasPrefix("item 1: 'aad'") == true, "\(reply.object)")

        // Another account's envelope names a key ID this account never had: unknown, naming the item.
        let bobs = list(try await sealBatch(daemon, "bob", [(bytes("bob's"), nil)]), "envelopes")
        let crossed = try await openBatch(daemon, "alice", [good[0], (try #require(bobs.first), nil)])
        #expect(crossed.status == 404, "\(crossed.object)")
        #expect(crossed.state == "unknown")
        #expect(crossed["error"]?.hasPrefix("item 1:") == true, "\(crossed.object)")

        // The good batch still opens.
        #expect(list(try await openBatch(daemon, "alice", good), "plaintexts").map { Base64.decode($0) ?? [] } == [bytes("zero"), bytes("one"), bytes("two")])
    }

    @Test("the batch and its fields are checked: size, shape, base64, key ID, account")
    func batchChecks() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        try await daemon.start()
        _ = try await daemon.request("POST", "/v1/accounts", json: ["user": "alice", "passphrase": "pw"])
        let empty = try await sealBatch(daemon, "alice", [])
        #expect(empty.state == "invalid")
        #expect(empty["error"]?.contains("1 to 1000 items") == true)
        let tooMany = try await sealBatch(daemon, "alice", Array(repeating: ([1] as [UInt8], nil as String?), count: 1001))
        #expect(tooMany.state == "invalid")
        #expect(tooMany["error"]?.contains("1001") == true, "\(tooMany.object)")
        #expect(list(try await sealBatch(daemon, "alice", Array(repeating: ([1] as [UInt8], nil as String?), count: 1000)), "envelopes").count == 1000)
        let tooBig = try await sealBatch(daemon, "alice", [(Array(repeating: 1, count: 60_000), nil)])
        #expect(tooBig.state == "invalid")
        #expect(tooBig["error"]?.contains("64 KiB") == true, "\(tooBig.object)")

        let badPlaintext = try await daemon.request("POST", "/v1/accounts/alice/seal", json: ["items": [["plaintext": "AAAA"], ["plaintext": "AAA"]]])
        #expect(badPlaintext.state == "invalid")
        #expect(badPlaintext["error"]?.hasPrefix("item 1: 'plaintext'") == true, "\(badPlaintext.object)")
        let shape = try await daemon.request("POST", "/v1/accounts/alice/seal", json: ["items": [["envelope": "AAAA"]]])
        #expect(shape.state == "invalid")
        #expect(shape["error"]?.contains("plaintext") == true)
        let badKeyID = try await sealBatch(daemon, "alice", [([1], nil)], keyId: "ABC")
        #expect(badKeyID.state == "invalid")
        #expect(badKeyID["error"]?.contains("'keyId' must be 32 lowercase hex characters") == true, "\(badKeyID.object)")
        let unknownKeyID = try await sealBatch(daemon, "alice", [([1], nil)], keyId: String(repeating: "0", count: 32))
        #expect(unknownKeyID.status == 404)
        #expect(unknownKeyID.state == "unknown")
        let nobody = try await sealBatch(daemon, "nobody", [([1], nil)])
        #expect(nobody.status == 404)
        #expect(nobody.state == "unknown")
    }

    @Test("a caller without the seal permission is forbidden, and learns nothing")
    func forbidden() async throws {
        let everythingButSeal = Permission.allCases.filter { $0 != .seal }.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
        let daemon = try DaemonProcess(policy: DaemonProcess.testPolicy.replacingOccurrences(of: #"allow = ["*"]"#, with: "allow = [\(everythingButSeal)]"))
        defer { daemon.remove() }
        try await daemon.start()
        #expect(try await daemon.request("POST", "/v1/accounts", json: ["user": "alice", "passphrase": "pw"]).status == 200)
        #expect(try await daemon.request("GET", "/v1/accounts/alice/keys/current").status == 200)
        for reply in [try await sealBatch(daemon, "alice", [(bytes("x"), nil)]), try await openBatch(daemon, "alice", [("AAAA", nil)]),
                      try await sealBatch(daemon, "nobody", [(bytes("x"), nil)])] {
            #expect(reply.status == 403, "\(reply.object)")
            #expect(reply.state == "forbidden")
            #expect(reply["error"]?.contains("seal") == true)
            #expect(reply.object["envelopes"] == nil)
        }
    }

    @Test("locked: seal and open answer locked; afterFirstUnlock keeps opening after a lock, as key reads do")
    func locked() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        try await daemon.start()
        _ = try await daemon.request("POST", "/v1/accounts", json: ["user": "alice", "passphrase": "pw"])
        _ = try await daemon.request("POST", "/v1/accounts", json: ["user": "bg", "passphrase": "pw", "accessibility": "afterFirstUnlock"])
        let envelope = try #require(list(try await sealBatch(daemon, "alice", [(bytes("kept"), nil)]), "envelopes").first)
        let background = try #require(list(try await sealBatch(daemon, "bg", [(bytes("bg"), nil)]), "envelopes").first)
        for account in ["alice", "bg"] { #expect(try await daemon.request("POST", "/v1/accounts/\(account)/lock").status == 200) }

        for reply in [try await sealBatch(daemon, "alice", [(bytes("x"), nil)]), try await openBatch(daemon, "alice", [(envelope, nil)])] {
            #expect(reply.status == 423, "\(reply.object)")
            #expect(reply.state == "locked")
            #expect(reply.object["plaintexts"] == nil && reply.object["envelopes"] == nil)
        }
        #expect(list(try await openBatch(daemon, "bg", [(background, nil)]), "plaintexts") == [Base64.encode(bytes("bg"))])

        #expect(try await daemon.request("POST", "/v1/accounts/alice/unlock", json: ["passphrase": "pw"]).status == 200)
        #expect(list(try await openBatch(daemon, "alice", [(envelope, nil)]), "plaintexts") == [Base64.encode(bytes("kept"))])
    }

    @Test("after rotation: old envelopes still open, new ones use the new generation, keyId picks a generation")
    func afterRotation() async throws {
        let circle = try await Circle()
        defer { circle.remove() }
        let a = try await circle.device()
        _ = try await a.request("POST", "/v1/accounts", json: ["user": "rot", "passphrase": "pa"])
        let first = try await sealBatch(a, "rot", [(bytes("old one"), "x"), (bytes("old two"), nil)])
        let oldKeyID = try #require(first["keyId"])
        let old = list(first, "envelopes")

        let rotated = try await a.request("POST", "/v1/accounts/rot/rotate", json: ["promote": "now"])
        #expect(rotated.object["generation"] as? Int == 2, "\(rotated.object)")
        let second = try await sealBatch(a, "rot", [(bytes("new"), nil)])
        #expect(second.object["generation"] as? Int == 2)
        #expect(second["keyId"] != oldKeyID)
        #expect(second["keyId"] == rotated["keyId"])

        // One batch across generations: each envelope opens under the key it names.
        let opened = try await openBatch(a, "rot", [(old[0], "x"), (try #require(list(second, "envelopes").first), nil), (old[1], nil)])
        #expect(opened.status == 200, "\(opened.object)")
        #expect(list(opened, "plaintexts").map { Base64.decode($0) ?? [] } == [bytes("old one"), bytes("new"), bytes("old two")])

        let pinned = try await sealBatch(a, "rot", [(bytes("pinned"), nil)], keyId: oldKeyID)
        #expect(pinned.object["generation"] as? Int == 1)
        #expect(pinned["keyId"] == oldKeyID)
    }

    @Test("a device that has not been approved answers pending, as a key read does; once it holds the key, it opens")
    func pendingThenReady() async throws {
        let circle = try await Circle()
        defer { circle.remove() }
        let a = try await circle.device()
        let b = try await circle.device()
        _ = try await a.request("POST", "/v1/accounts", json: ["user": "pair", "passphrase": "pa"])
        let envelope = try #require(list(try await sealBatch(a, "pair", [(bytes("for b"), "ctx")]), "envelopes").first)

        let ticket = try await b.request("POST", "/v1/accounts/pair/enroll", json: ["passphrase": "pb", "deviceName": "b"])
        #expect(ticket.status == 202, "\(ticket.object)")
        for reply in [try await openBatch(b, "pair", [(envelope, "ctx")]), try await sealBatch(b, "pair", [(bytes("x"), nil)])] {
            #expect(reply.status == 202, "\(reply.object)")
            #expect(reply.state == "pending")
            #expect(reply["reason"] == "awaiting-approval")
            #expect(reply.raw.header("Retry-After") != nil)
            #expect(reply.object["plaintexts"] == nil)
        }

        let deviceID = try #require(ticket["deviceId"])
        let code = try #require(ticket["pairingCode"])
        try await eventually {
            (try await a.request("GET", "/v1/accounts/pair/enrollments").object["enrollments"] as? [[String: Any]])?.isEmpty == false
        }
        #expect(try await a.request("POST", "/v1/accounts/pair/enrollments/\(deviceID)/approve", json: ["pairingCode": code]).status == 200)
        try await eventually { try await openBatch(b, "pair", [(envelope, "ctx")]).state == "ready" }
        #expect(list(try await openBatch(b, "pair", [(envelope, "ctx")]), "plaintexts") == [Base64.encode(bytes("for b"))])
    }

    @Test("the CLI: seal reads standard input and prints an envelope; open prints the plaintext")
    func cli() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        try await daemon.start()
        _ = try await daemon.request("POST", "/v1/accounts", json: ["user": "alice", "passphrase": "pw"])
        let cli = DaemonProcess.binaryDirectory + "/keyvault"
        let sealed = try await run(cli, ["seal", "--account", "alice", "--aad", "doc 7", "--socket", daemon.socket], stdin: "line one\nline two\n")
        #expect(sealed.status == 0, "\(sealed.err)")
        let envelope = sealed.out.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(Base64.decode(envelope)?.first == 1)
        let opened = try await run(cli, ["open", "--account", "alice", "--aad", "doc 7", "--socket", daemon.socket], stdin: envelope + "\n")
        #expect(opened.status == 0, "\(opened.err)")
        #expect(opened.out == "line one\nline two\n")
        let wrong = try await run(cli, ["open", "--account", "alice", "--socket", daemon.socket], stdin: envelope)
        #expect(wrong.status == 1)
        #expect(wrong.err.contains("item 0 does not open"))
    }
}
