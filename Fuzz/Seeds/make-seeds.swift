// Writes the seed inputs of every fuzz target into Fuzz/corpus/<target>/seed-*
// (those missing):
// valid records cut from the protocol vectors (Tests/KeyVaultTests/vectors/protocol.json)
// and made with the harnesses' fixed keys, in each harness's input format.
// Run by `scripts/fuzz.sh seeds`; the files it writes are committed.
//
//   make-seeds CORPUS_DIR PROTOCOL_JSON
import Foundation
import KeyVaultCrypto
@testable import KeyVaultProtocol
import KeyVaultAccount
import KeyVaultVault
import FuzzSupport

@main
struct MakeSeeds {
    static func main() throws {
        let args = CommandLine.arguments
        guard args.count == 3 else {
            FileHandle.standardError.write(Data("usage: make-seeds CORPUS_DIR PROTOCOL_JSON\n".utf8))
            exit(2)
        }
        let seeds = Seeds(root: URL(fileURLWithPath: args[1]),
                          vectors: try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: args[2]))) as! [String: Any])
        try seeds.logEntries()
        try seeds.circleResigned()
        try seeds.keyShare()
        try seeds.pairing()
        try seeds.recoveryKit()
        try seeds.relayRows()
        try seeds.policy()
        try seeds.secretBody()
        try seeds.httpExchange()
        try seeds.lastEventID()
        try seeds.relayWake()
    }
}

func hex(_ text: String) -> [UInt8] { Hex.decode(text)! }

struct Seeds {
    let root: URL
    let vectors: [String: Any]

    var pairingVectors: [String: Any] { vectors["pairing"] as! [String: Any] }

    func write(_ target: String, _ name: String, _ bytes: [UInt8]) throws {
        let folder = root.appendingPathComponent(target)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let safe = name.map { $0.isLetter || $0.isNumber ? $0 : "-" }
        let file = folder.appendingPathComponent("seed-" + String(safe))
        // A seed already there is kept (some hold random bytes: a sealed box's, a kit's salt); delete it to write it again.
        guard !FileManager.default.fileExists(atPath: file.path) else { return }
        try Data(bytes).write(to: file)
    }

    // MARK: log_entries

    /// Each log case of the vectors: the log before it, then its entry.
    func logEntries() throws {
        for case let c as [String: Any] in vectors["cases"] as! [Any] where c["record"] as? String == "log" {
            let log = (c["log"] as! [String]).map(hex) + [hex(c["hex"] as! String)]
            try write("log_entries", c["name"] as! String, log.flatMap(framed))
        }
    }

    // MARK: circle_resigned

    /// An entry's signed bytes (seq and previous hash are filled in by the harness).
    func signed(_ body: LogEntry.Body, by signer: Int, at ms: UInt64 = FuzzKeys.genesisMillis + 60_000) -> [UInt8] {
        LogEntry(account: FuzzKeys.account, seq: 0, previousHash: .zero, signer: FuzzKeys.deviceIDs[signer], createdAt: ms, body: body,
                 signature: []).signedBytes
    }

    func entryOp(_ body: LogEntry.Body, by signer: Int, relay: Bool = false) -> [UInt8] {
        [relay ? 4 : 0, UInt8(signer), 7] + framed(signed(body, by: signer))
    }

    func ackOp(generation: Generation, key: Int, by signer: Int) -> [UInt8] {
        let ack = ShareAck(account: FuzzKeys.account, generation: generation, keyID: FuzzKeys.keyIDs[key], deviceID: FuzzKeys.deviceIDs[signer],
                           receivedAt: FuzzKeys.genesisMillis + 90_000, signature: [])
        return [1, UInt8(signer), 4] + framed(ack.signedBytes)
    }

    func shareHeader(generation: Generation, key: Int, from sender: Int, to recipient: Int) -> [UInt8] {
        KeyShare.Header(account: FuzzKeys.account, generation: generation, keyID: FuzzKeys.keyIDs[key],
                        createdAt: Date(timeIntervalSince1970: 1_795_300_100), sender: FuzzKeys.deviceIDs[sender],
                        recipient: FuzzKeys.deviceIDs[recipient]).encoded
    }

    func shareOp(generation: Generation, key: Int, from sender: Int) -> [UInt8] {
        [2, UInt8(sender), UInt8(key), 3] + framed(shareHeader(generation: generation, key: key, from: sender, to: 0))
    }

    func circleResigned() throws {
        let approve1 = entryOp(.approve(device: FuzzKeys.deviceKeys[1], requestHash: .zero), by: 0)
        let announce2 = entryOp(.announce(generation: 2, keyID: FuzzKeys.keyIDs[1], keyCreatedAt: FuzzKeys.genesisMillis + 61_000), by: 1)
        let promote2 = entryOp(.promote(generation: 2, keyID: FuzzKeys.keyIDs[1]), by: 1)
        let timers: [UInt8] = [3, 4] + u64be(FuzzKeys.genesisMillis + 86_400_000) + [3, 2] + u64be(FuzzKeys.genesisMillis + 86_400_001)
        try write("circle_resigned", "approve", [0] + approve1)
        try write("circle_resigned", "genesis-times", [1] + u64be(FuzzKeys.genesisMillis) + u64be(FuzzKeys.genesisMillis) + approve1)
        try write("circle_resigned", "rotation", [0] + approve1 + announce2 + ackOp(generation: 2, key: 1, by: 1)
                    + shareOp(generation: 2, key: 1, from: 1) + timers + promote2)
        try write("circle_resigned", "my-rotation-acked", [0] + approve1
                    + entryOp(.announce(generation: 2, keyID: FuzzKeys.keyIDs[2], keyCreatedAt: FuzzKeys.genesisMillis + 61_000), by: 0)
                    + [3, 4] + u64be(FuzzKeys.genesisMillis + 86_400_000) + ackOp(generation: 2, key: 2, by: 1) + [3, 3] + u64be(0))
        try write("circle_resigned", "revoke-rotate", [0] + approve1 + entryOp(.approve(device: FuzzKeys.deviceKeys[3], requestHash: .zero), by: 1)
                    + entryOp(.revoke(deviceID: FuzzKeys.deviceIDs[3]), by: 0)
                    + entryOp(.announce(generation: 2, keyID: FuzzKeys.keyIDs[2], keyCreatedAt: FuzzKeys.genesisMillis + 62_000), by: 0)
                    + entryOp(.promote(generation: 2, keyID: FuzzKeys.keyIDs[2]), by: 0))
        try write("circle_resigned", "recovery-member", [0] + approve1 + entryOp(.recovery(device: FuzzKeys.deviceKeys[2]), by: 0)
                    + entryOp(.approve(device: FuzzKeys.deviceKeys[3], requestHash: .zero), by: 2)
                    + shareOp(generation: 1, key: 0, from: 2))
        try write("circle_resigned", "destroy", [0] + approve1 + entryOp(.destroy, by: 1) + announce2)
        try write("circle_resigned", "share-gen1", [0] + approve1 + shareOp(generation: 1, key: 0, from: 1))
        try write("circle_resigned", "rebase", [0] + entryOp(.approve(device: FuzzKeys.deviceKeys[1], requestHash: .zero), by: 0)
                    + entryOp(.announce(generation: 2, keyID: FuzzKeys.keyIDs[2], keyCreatedAt: FuzzKeys.genesisMillis + 61_000), by: 0)
                    + entryOp(.approve(device: FuzzKeys.deviceKeys[2], requestHash: .zero), by: 0, relay: true)
                    + entryOp(.announce(generation: 2, keyID: FuzzKeys.keyIDs[3], keyCreatedAt: FuzzKeys.genesisMillis + 63_000), by: 2, relay: true))
    }

    // MARK: key_share

    func keyShare() throws {
        let header = shareHeader(generation: 2, key: 1, from: 1, to: 0)
        try write("key_share", "signed-gen2", [2, 1, 1, 0] + header)
        try write("key_share", "signed-gen1", [2, 1, 0, 0] + shareHeader(generation: 1, key: 0, from: 1, to: 0))
        try write("key_share", "signed-from-recovery", [2, 2, 0, 0] + shareHeader(generation: 1, key: 0, from: 2, to: 0))
        try write("key_share", "signed-raw-key", [2, 1, 255, 1] + [UInt8](repeating: 0x42, count: 32) + header)
        var plain = LabeledHash.lengthPrefix(header.count) + header
        FuzzKeys.keys[1].bytes.withUnsafeBytes { plain += $0 }
        plain += FuzzKeys.devices[1].signing.signature(for: plain)
        try write("key_share", "plaintext", [1] + plain)
        try write("key_share", "sealed", [0] + SealedBox.seal(SecureBytes(copying: plain), to: FuzzKeys.devices[0].box.publicKey))
        try write("key_share", "header", [3] + header)
        try write("key_share", "vectors-header", [3] + hex(vectors["shareHeaderHex"] as! String))
        try write("key_share", "vectors-plaintext", [1] + hex(vectors["sharePlaintextHex"] as! String))
        try write("key_share", "vectors-ack", [4] + hex(vectors["ackHex"] as! String))
        let ack = ShareAck.make(account: FuzzKeys.account, generation: 2, keyID: FuzzKeys.keyIDs[1], deviceID: FuzzKeys.deviceIDs[0],
                                signer: FuzzKeys.devices[0].signing, at: Date(timeIntervalSince1970: 1_795_300_200))
        try write("key_share", "ack", [4] + ack.encoded)
    }

    // MARK: pairing

    func pairing() throws {
        let p = pairingVectors
        // Whole records (signer 254), and their signed bytes for the harness to sign (the signer the record names).
        let v2: [(UInt8, String, UInt8)] = [(0, "request", 1), (1, "response", 0), (2, "confirmation", 1), (3, "approval", 0)]
        for (mode, name, signer) in v2 {
            try write("pairing", name, [mode, 254] + hex(p[name + "Hex"] as! String))
            try write("pairing", name + "-signed", [mode, signer] + hex(p[name + "SignedHex"] as! String))
        }
        let v1: [(UInt8, String, UInt8)] = [(4, "request", 1), (5, "challenge", 0), (6, "reveal", 1)]
        for (mode, name, signer) in v1 {
            try write("pairing", "v1-" + name, [mode, 254] + hex(vectors[name + "Hex"] as! String))
            try write("pairing", "v1-" + name + "-signed", [mode, signer] + hex(vectors[name + "SignedHex"] as! String))
        }
        try write("pairing", "probe-confirmation", [7, 254] + hex(p["confirmationHex"] as! String))
    }

    // MARK: recovery_kit

    func kitPlaintext(keys: [Int], member: Int?) -> [UInt8] {
        var out = LabeledHash.lengthPrefix(keys.count)
        for (i, key) in keys.enumerated() {
            out += LabeledHash.lengthPrefix(i + 1) + u64be(FuzzKeys.genesisMillis + UInt64(i))
            out += FuzzKeys.keyIDs[key].bytes
            FuzzKeys.keys[key].bytes.withUnsafeBytes { out += $0 }
        }
        if let member {
            out += [1]
            FuzzKeys.devices[member].signing.seed.withUnsafeBytes { out += $0 }
            FuzzKeys.devices[member].box.secret.withUnsafeBytes { out += $0 }
        } else {
            out += [0]
        }
        return out
    }

    func recoveryKit() throws {
        let v1 = Array(kitPlaintext(keys: [0], member: nil).dropLast())
        try write("recovery_kit", "plain-v1", [1, 0] + v1)
        try write("recovery_kit", "plain-v2", [1, 1] + kitPlaintext(keys: [0, 1], member: nil))
        try write("recovery_kit", "plain-v2-member", [1, 1] + kitPlaintext(keys: [0, 1, 2], member: 2))
        try write("recovery_kit", "plain-empty", [1, 1] + [0, 0, 0, 0, 0])
        var h = FieldWriter()
        h.string(Labels.recoveryKitV2)
        h.string(FuzzKeys.account.rawValue)
        h.u64(1)
        h.u64(8192)
        h.bytes([UInt8](repeating: 0x5a, count: 16))
        let header = h.bytes
        try write("recovery_kit", "header-and-plain", [2] + [UInt8(header.count >> 8), UInt8(header.count & 0xff)] + header
                    + kitPlaintext(keys: [0], member: 1))
        let passphrase = SecureBytes(copying: Array("correct horse battery staple".utf8))
        let kept = (0..<2).map { i in
            RecoveryKit.KeptKey(number: Generation(i + 1)!, keyID: FuzzKeys.keyIDs[i], createdAt: Date(timeIntervalSince1970: 1_795_300_000),
                                key: FuzzKeys.keys[i])
        }
        let kit = try RecoveryKit.seal(account: FuzzKeys.account, generations: kept, member: FuzzKeys.devices[3], passphrase: passphrase,
                                       parameters: try KDFParameters(opsLimit: 1, memLimitBytes: 8192))
        try write("recovery_kit", "kit", [0] + kit)
    }

    // MARK: relay_rows

    func relayRows() throws {
        func row(_ cursor: Int, _ kind: String, _ body: [UInt8], seq: Int? = nil, recipient: DeviceID? = nil) -> String {
            var fields = [#""cursor":\#(cursor)"#, #""kind":"\#(kind)""#, #""body":"\#(Base64.encode(body))""#]
            if let seq { fields.append(#""logSeq":\#(seq)"#) }
            if let recipient { fields.append(#""recipient":"\#(recipient.hex)""#) }
            return "{" + fields.joined(separator: ",") + "}"
        }
        let p = pairingVectors
        let header = shareHeader(generation: 1, key: 0, from: 1, to: 0)
        var plain = LabeledHash.lengthPrefix(header.count) + header
        FuzzKeys.keys[0].bytes.withUnsafeBytes { plain += $0 }
        plain += FuzzKeys.devices[1].signing.signature(for: plain)
        let share = SealedBox.seal(SecureBytes(copying: plain), to: FuzzKeys.devices[0].box.publicKey)
        let rows = [
            row(1, "log", hex(vectors["genesisHex"] as! String), seq: 0),
            row(2, "log", hex(vectors["approveHex"] as! String), seq: 1),
            row(3, "request", hex(p["requestHex"] as! String)),
            row(4, "request", hex(vectors["requestHex"] as! String)),
            row(5, "challenge", hex(p["responseHex"] as! String)),
            row(6, "challenge", hex(p["approvalHex"] as! String)),
            row(7, "challenge", hex(vectors["challengeHex"] as! String)),
            row(8, "reveal", hex(p["confirmationHex"] as! String)),
            row(9, "share", share, recipient: FuzzKeys.deviceIDs[0]),
            row(10, "ack", hex(vectors["ackHex"] as! String)),
        ]
        try write("relay_rows", "rows", Array(#"{"rows":[\#(rows.joined(separator: ","))]}"#.utf8))
        try write("relay_rows", "publish", Array(#"{"records":[{"kind":"log","logSeq":0,"body":"AAAA"}]}"#.utf8))
        try write("relay_rows", "refusal", Array(#"{"error":"logSeqTaken","reason":"taken","seq":3}"#.utf8))
        try write("relay_rows", "empty", Array(#"{"rows":[]}"#.utf8))
    }

    // MARK: policy_toml

    func policy() throws {
        let policies = [
            "rules": """
                [[rule]]
                uid = "self"
                accounts = ["*"]
                allow = ["*"]

                [[rule]]
                uid = 2000           # a sync engine
                accounts = ["app-*", "exact"]
                allow = ["read", "wait"]

                [[rule]]
                gid = "3000"
                accounts = ['team-*']
                allow = [ 'read',"seal" ]
                """,
            "settings": """
                [kdf]
                passes = 3
                memory_mib = 256
                kit_max_passes = 4
                kit_max_memory_mib = 512
                [limits]
                max_wait_seconds = 300
                [unlock-backoff]
                base_seconds = 1
                max_seconds = 900
                [rotation]
                promotion_deadline_seconds = 86400
                rotate_on_revoke = false
                max_key_age_seconds = 7_776_000
                [enrollment]
                request_lifetime_seconds = 3600
                [socket]
                group = 0
                [[rule]]
                uid = "root"
                accounts = ["*"]
                allow = ["health", "status"]
                """,
            "kdf-test": """
                [kdf-test]
                passes = 1
                memory_kib = 64
                [[rule]]
                uid = 1000
                accounts = [
                  "a",   # one
                  "b-*",
                ]
                allow = ["create", "unlock", "lock", "passphrase", "enroll", "approve", "revoke", "rotate", "export", "delete"]
                """,
            "strings": "[[rule]]\n\"uid\" = \"se\\tlf\\\\\"\naccounts = ['a\\n', \"o'b\"]\nallow = [\"read\"]\r\n",
        ]
        for (name, text) in policies { try write("policy_toml", name, Array(text.utf8)) }
        if let shipped = FileManager.default.contents(atPath: "policy/default.toml") { try write("policy_toml", "default", Array(shipped)) }
    }

    // MARK: secret_body

    func secretBody() throws {
        let bodies: [(String, UInt8, String)] = [
            ("create", 0, #"{"user": "alice", "passphrase": "pw", "accessibility": "afterFirstUnlock", "deviceName": "laptop", "identityToken": null}"#),
            ("escapes", 0, #"{"passphrase": "\u00e9\u20ac\ud83d\ude00\b\f\n\r\t\"\\\/", "user": "al\u0069ce"}"#),
            ("unknown", 0, #"{"extra": [1, -2.5e+3, {"a": [true, false, null]}, "x"], "passphrase": "pw"}"#),
            ("import", 1, #"{"kit": "AAAA", "kitPassphrase": "kit pw", "passphrase": "pw", "deviceName": "phone"}"#),
            ("change", 2, #"{"old": "a", "new": "b"}"#),
            ("seal", 3, #"{"items": [{"plaintext": "aGk=", "aad": "eA=="}], "keyId": "0123456789abcdef0123456789abcdef"}"#),
            ("open", 3, #"{"items": [{"envelope": "AQ=="}]}"#),
            ("rotate", 3, #"{"promote": "now", "identityToken": "t", "pairingCode": "042917"}"#),
        ]
        for (name, mode, text) in bodies { try write("secret_body", name, [mode] + Array(text.utf8)) }
    }

    // MARK: http_exchange

    func httpExchange() throws {
        // 0 bytes, 1 head (flags: bit 3 HTTP/1.0, bit 4 keep-alive), 2 body, 3 end, 4 parse error,
        // 5 deadline, 6 response head (bit 3 content length, bit 4 close), 7 response end.
        try write("http_exchange", "keep-alive", [0, 0, 1 | 16, 2, 3, 6 | 8, 7, 0, 1 | 16, 3, 6 | 8, 7])
        try write("http_exchange", "pipelined-close", [0, 0, 1 | 16, 3, 1, 3, 6 | 8, 7, 6, 7, 1 | 16])
        try write("http_exchange", "http10", [0, 0, 1 | 8, 3, 6, 7, 0])
        try write("http_exchange", "parse-error", [0, 0, 1 | 16, 3, 4, 6 | 8, 7, 7])
        try write("http_exchange", "deadline", [0, 0, 1 | 16, 2, 5, 6 | 8, 7])
        try write("http_exchange", "refused", [1, 0, 1 | 16, 5, 6, 7])
    }

    // MARK: relay_wake

    func relayWake() throws {
        try write("relay_wake", "landed", Array("account-1 42".utf8))
        try write("relay_wake", "account-alone", Array("account-1".utf8))
        try write("relay_wake", "zero", Array("account-1 0".utf8))
        try write("relay_wake", "three-parts", Array("a 1 2".utf8))
    }

    // MARK: last_event_id

    func lastEventID() throws {
        try write("last_event_id", "recent", [10] + Array("0123456789abcdef-7".utf8))
        try write("last_event_id", "all-seen", [10] + Array("0123456789abcdef-10".utf8))
        try write("last_event_id", "dropped", [200] + Array("0123456789abcdef-100".utf8))
        try write("last_event_id", "other-epoch", [3] + Array("fedcba9876543210-1".utf8))
    }
}
