import Foundation
import KeyVault
import KeyVaultEngine
import KeyVaultPolicy
import Testing
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultRelayWire
import KeyVaultAccount
import KeyVaultVault
import KeyVaultRelay
import KeyVaultRelayClient
import KeyVaultRelayStore

/// docs/PROTOCOL.md's vectors, made by tools/protocol-vectors.py (Python and
/// libsodium, written from the spec): the Swift encodings must match byte for
/// byte, and every case (log entry, request, challenge, reveal, key share)
/// must end in its one expected outcome.
@Suite("Relay protocol vectors")
struct ProtocolVectorTests {
    struct File: Decodable {
        /// `hex` for every record kind but `share`, which has `sharePlaintextHex` (sealing is randomised).
        struct Case: Decodable { var name, record, expect: String; var hex, sharePlaintextHex: String?; var log: [String] }
        struct Inputs: Decodable {
            struct Device: Decodable { var x25519SecretHex: String }
            var account, keyHex: String
            var deviceB: Device
        }
        var inputs: Inputs
        var deviceIdA, deviceIdB, boxPublicKeyB, genesisHex, genesisHash, requestHex, requestHash, pairingCode, approveHex, approveHash: String
        var pairingSecretHex, challengeHex, challengeHash, revealHex: String
        var cases: [Case]
        struct RelayRequest: Decodable {
            var method, path, query, nonce, keyid, contentDigest, signatureInput, signatureBase, signature, identityNonce: String
            var created: Int64
        }
        var relayRequest: RelayRequest
    }

    /// PROTOCOL.md, "Test vectors", "Cases".
    static let caseCount = 53

    static func outcome(_ error: ProtocolError) -> String {
        switch error {
        case .malformed: return "malformed"
        case .badSignature: return "badSignature"
        case .untrustedSigner: return "untrustedSigner"
        case .fork: return "fork"
        case .gap: return "gap"
        case .rollback: return "rollback"
        case .invalid: return "invalid"
        }
    }

    @Test("a relay-service request's RFC 9421 signature and a device's identity nonce match the independent implementation (RELAY.md)")
    func relayServiceRequest() throws {
        let v = try Vectors.load("protocol.json", as: File.self)
        let r = v.relayRequest
        let signing = try SigningKey(seed: SecureBytes(copying: Array(repeating: UInt8(0x01), count: 32)))
        let box = try BoxSecretKey(secret: SecureBytes(copying: Array(repeating: UInt8(0x03), count: 32)))
        #expect(DeviceKeys(signing: signing.publicKey, box: box.publicKey, name: "").deviceID.hex == r.keyid)
        let signature = RequestSignature(method: r.method, path: r.path, query: r.query, body: [], created: r.created, nonce: r.nonce, keyID: DeviceID(testHex: r.keyid))
        #expect(signature.contentDigest == r.contentDigest)
        #expect(signature.signatureInputHeader == r.signatureInput)
        #expect(String(decoding: signature.base, as: UTF8.self) == r.signatureBase)
        #expect(signature.signatureHeader(signedBy: signing) == r.signature)
        let raw = try #require(Base64.decode(String(r.signature.dropFirst(4).dropLast())))
        #expect(signature.isValid(signature: raw, by: signing.publicKey))
        var moved = signature
        moved.path = "/v1/accounts/bob/records"
        #expect(!moved.isValid(signature: raw, by: signing.publicKey), "the path is covered")
        #expect(IdentityNonce.of(signing: signing.publicKey, box: box.publicKey) == r.identityNonce)
    }

    @Test("identifiers, hashes and the pairing code match the independent implementation")
    func mainValues() throws {
        let v = try Vectors.load("protocol.json", as: File.self)
        let genesis = try LogEntry.decode(Vectors.hex(v.genesisHex))
        #expect(genesis.hash.hex == v.genesisHash)
        #expect(genesis.encoded == (try Vectors.hex(v.genesisHex)))
        #expect(genesis.signer.hex == v.deviceIdA)
        let request = try EnrollmentRequest.decode(Vectors.hex(v.requestHex))
        #expect(request.hash.hex == v.requestHash)
        #expect(request.commitment == PairingCode.commitment(to: try Vectors.hex(v.pairingSecretHex)))
        guard case .genesis(let deviceA, _, _, _) = genesis.body else { Issue.record("not a genesis"); return }
        let challenge = try EnrollmentChallenge.decode(Vectors.hex(v.challengeHex)) { $0.hex == v.deviceIdA ? deviceA.signing : nil }
        #expect(Hex.encode(challenge.hash) == v.challengeHash)
        let reveal = try EnrollmentReveal.decode(Vectors.hex(v.revealHex), request: request)
        #expect(reveal.challengeHash == challenge.hash)
        #expect(PairingCode.derive(requestHash: request.hash, challenge: challenge.nonce, secret: reveal.secret) == v.pairingCode)
        let approve = try LogEntry.decode(Vectors.hex(v.approveHex))
        #expect(approve.hash.hex == v.approveHash)
        var circle = CircleState(account: try AccountID(validating: "alice"))
        try circle.apply(genesis)
        try circle.apply(approve)
        #expect(circle.trustedDevices.count == 2)
    }

    @Test("every case ends in its one outcome")
    func cases() throws {
        let v = try Vectors.load("protocol.json", as: File.self)
        let account = try AccountID(validating: v.inputs.account)
        // What the reveal cases are checked against: B's request, and A's challenge as accepted by a device with the genesis.
        let request = try EnrollmentRequest.decode(Vectors.hex(v.requestHex))
        var afterGenesis = CircleState(account: account)
        try afterGenesis.apply(LogEntry.decode(Vectors.hex(v.genesisHex)))
        let challenge = try EnrollmentChallenge.accept(Vectors.hex(v.challengeHex), in: afterGenesis)
        // What the share cases are taken in with: B's box key pair.
        let boxB = try BoxSecretKey(secret: SecureBytes(copying: Vectors.hex(v.inputs.deviceB.x25519SecretHex)))
        #expect(Hex.encode(boxB.publicKey.rawRepresentation) == v.boxPublicKeyB)

        #expect(v.cases.count == Self.caseCount)
        var checked: [String: Int] = [:]
        for c in v.cases {
            var circle = CircleState(account: account)
            for prior in c.log { try circle.apply(LogEntry.decode(Vectors.hex(prior))) }
            try #require(circle.nextSeq == LogSeq(index: c.log.count), "\(c.name): its log does not apply")
            let got: String
            do {
                switch c.record {
                case "log":
                    let before = circle.nextSeq
                    try circle.apply(LogEntry.decode(Vectors.hex(#require(c.hex, "\(c.name)"))))
                    got = circle.nextSeq > before ? "accepted" : "noop"
                case "request":
                    _ = try EnrollmentRequest.decode(Vectors.hex(#require(c.hex, "\(c.name)")))
                    got = "accepted"
                case "challenge":
                    _ = try EnrollmentChallenge.accept(Vectors.hex(#require(c.hex, "\(c.name)")), in: circle)
                    got = "accepted"
                case "reveal":
                    _ = try EnrollmentReveal.accept(Vectors.hex(#require(c.hex, "\(c.name)")), for: request) { $0 == challenge.hash }
                    got = "accepted"
                case "share":
                    let plain = SecureBytes(copying: try Vectors.hex(#require(c.sharePlaintextHex, "\(c.name)")))
                    let sealed = SealedBox.seal(plain, to: boxB.publicKey)
                    let share = try KeyShare.accept(sealed, with: boxB, as: DeviceID(testHex: v.deviceIdB), in: circle)
                    #expect(share.key.hexEncodedString() == v.inputs.keyHex, "\(c.name)")
                    got = "accepted"
                default:
                    Issue.record("\(c.name): unknown record kind '\(c.record)'")
                    continue
                }
            } catch let error as ProtocolError {
                got = Self.outcome(error)
            }
            #expect(got == c.expect, "\(c.name)")
            checked[c.record, default: 0] += 1
        }
        let total = checked.values.reduce(0, +)
        #expect(total == v.cases.count, "cases skipped")
        let kinds = ["log", "request", "challenge", "reveal", "share"].map { "\($0) \(checked[$0] ?? 0)" }.joined(separator: ", ")
        print("protocol vectors: \(total) of \(v.cases.count) cases checked (\(kinds))")
    }

    @Test("a generation number past 2^31 is malformed, not a crash")
    func hugeGeneration() throws {
        // An acknowledgement whose generation field is 2^64 - 1.
        var bytes: [UInt8] = []
        func field(_ b: [UInt8]) { bytes += [UInt8(b.count >> 24), UInt8((b.count >> 16) & 0xff), UInt8((b.count >> 8) & 0xff), UInt8(b.count & 0xff)] + b }
        field(Array(Labels.ack.utf8)); field(Array("alice".utf8)); field([UInt8](repeating: 0xff, count: 8))
        field([UInt8](repeating: 1, count: 16)); field(Array("dev".utf8)); field([UInt8](repeating: 0, count: 8))
        let signed = bytes
        bytes = []
        field(signed); field([UInt8](repeating: 0, count: 64))
        #expect(throws: ProtocolError.self) { try ShareAck.decode(bytes) }
    }
}
