import Foundation
import KeyVault
import Testing

/// docs/PROTOCOL.md's vectors, made by tools/protocol-vectors.py (Python and
/// libsodium, written from the spec): the Swift encodings must match byte for
/// byte, and each log and request case must end in its one expected outcome.
@Suite("Relay protocol vectors")
struct ProtocolVectorTests {
    struct File: Decodable {
        struct Case: Decodable { var name, record, expect: String; var hex: String?; var log: [String]? }
        var deviceIdA, genesisHex, genesisHash, requestHex, requestHash, pairingCode, approveHex, approveHash: String
        var pairingSecretHex, challengeHex, challengeHash, revealHex: String
        var cases: [Case]
    }

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

    @Test("identifiers, hashes and the pairing code match the independent implementation")
    func mainValues() throws {
        let v = try Vectors.load("protocol.json", as: File.self)
        let genesis = try LogEntry.decode(Vectors.hex(v.genesisHex))
        #expect(Hex.encode(genesis.hash) == v.genesisHash)
        #expect(genesis.encoded == (try Vectors.hex(v.genesisHex)))
        #expect(genesis.signer == v.deviceIdA)
        let request = try EnrollmentRequest.decode(Vectors.hex(v.requestHex))
        #expect(Hex.encode(request.hash) == v.requestHash)
        #expect(request.commitment == PairingCode.commitment(to: try Vectors.hex(v.pairingSecretHex)))
        guard case .genesis(let deviceA, _, _, _) = genesis.body else { Issue.record("not a genesis"); return }
        let challenge = try EnrollmentChallenge.decode(Vectors.hex(v.challengeHex)) { $0 == v.deviceIdA ? deviceA.signing : nil }
        #expect(Hex.encode(challenge.hash) == v.challengeHash)
        let reveal = try EnrollmentReveal.decode(Vectors.hex(v.revealHex), request: request)
        #expect(reveal.challengeHash == challenge.hash)
        #expect(PairingCode.derive(requestHash: request.hash, challenge: challenge.nonce, secret: reveal.secret) == v.pairingCode)
        let approve = try LogEntry.decode(Vectors.hex(v.approveHex))
        #expect(Hex.encode(approve.hash) == v.approveHash)
        var circle = CircleState(account: try AccountID(validating: "alice"))
        try circle.apply(genesis)
        try circle.apply(approve)
        #expect(circle.trustedDevices.count == 2)
    }

    @Test("each log entry and request case ends in its one outcome")
    func cases() throws {
        let v = try Vectors.load("protocol.json", as: File.self)
        var checked = 0
        for c in v.cases where c.record == "log" || c.record == "request" {
            guard let hex = c.hex else { continue }
            var got: String
            do {
                if c.record == "request" {
                    _ = try EnrollmentRequest.decode(Vectors.hex(hex))
                    got = "accepted"
                } else {
                    var circle = CircleState(account: try AccountID(validating: "alice"))
                    for prior in c.log ?? [] { try circle.apply(try LogEntry.decode(Vectors.hex(prior))) }
                    let before = circle.nextSeq
                    try circle.apply(try LogEntry.decode(Vectors.hex(hex)))
                    got = circle.nextSeq > before ? "accepted" : "noop"
                }
            } catch let error as ProtocolError {
                got = Self.outcome(error)
            }
            #expect(got == c.expect, "\(c.name)")
            checked += 1
        }
        #expect(checked >= 20)
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
