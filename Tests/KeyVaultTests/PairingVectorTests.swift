import Foundation
import Testing
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultAccount

/// docs/PAIRING.md's vectors, made by tools/protocol-vectors.py with
/// tools/cpace_ref.py (pure Python ristretto255 and CPace, no libsodium): the
/// pairing records and every CPace value match byte for byte, and every case
/// ends in its one expected outcome.
@Suite("Pairing version 2 vectors")
struct PairingVectorTests {
    struct File: Decodable { var pairing: Pairing }
    struct Pairing: Decodable {
        struct Device: Decodable { var name, ed25519SeedHex, x25519SecretHex: String }
        struct Inputs: Decodable {
            var account, code, codeRandomHex, wrongCode, sessionHex, otherSessionHex, yaScalarHex, ybScalarHex: String
            var newDevice, responder, otherDevice: Device
            var requestedAtMs, approveCreatedAtMs: Int64
        }
        struct Draw: Decodable { var randomHex, result: String }
        struct Case: Decodable { var name, record, expect, hex: String; var log: [String] }
        var inputs: Inputs
        var deviceIdNew, deviceIdResponder, genesisHex, genesisHash: String
        var ciHex, sidHex, adaHex, adbHex, yaHex, ybHex, iskHex, taHex, tbHex: String
        var requestHex, requestHash, responseHex, responseHash, confirmationHex: String
        var approveHex, approveHash, approvalKeyHex, approvalTagHex, approvalHex: String
        var codeDraws: [Draw]
        var cases: [Case]
    }

    /// PAIRING.md, "Vectors": every case runs; a case added or dropped fails here.
    static let caseCount = 22

    struct Party {
        let signing: SigningKey
        let keys: DeviceKeys
        init(_ device: Pairing.Device) throws {
            signing = try SigningKey(seed: SecureBytes(copying: try Vectors.hex(device.ed25519SeedHex)))
            let box = try BoxSecretKey(secret: SecureBytes(copying: try Vectors.hex(device.x25519SecretHex)))
            keys = DeviceKeys(signing: signing.publicKey, box: box.publicKey, name: device.name)
        }
    }

    struct Setting {
        let v: Pairing
        let account: AccountID
        let newDevice, responder: Party
        let requestedAt, approvedAt: Date

        init() throws {
            v = try Vectors.load("protocol.json", as: File.self).pairing
            account = try AccountID(validating: v.inputs.account)
            newDevice = try Party(v.inputs.newDevice)
            responder = try Party(v.inputs.responder)
            requestedAt = Date(timeIntervalSince1970: Double(v.inputs.requestedAtMs) / 1000)
            approvedAt = Date(timeIntervalSince1970: Double(v.inputs.approveCreatedAtMs) / 1000)
        }

        func circle(_ log: [String]) throws -> CircleState {
            var circle = CircleState(account: account)
            for entry in log { try circle.apply(try LogEntry.decode(try Vectors.hex(entry))) }
            return circle
        }

        /// The new device's request with its fixed session and `ya`.
        func request(headHash: LogHash) throws -> PairingRequest.Started {
            try PairingRequest.make(account: account, device: newDevice.keys, signer: newDevice.signing, code: v.inputs.code,
                                    session: try Vectors.hex(v.inputs.sessionHex), headHash: headHash, at: requestedAt,
                                    scalarForTesting: try Vectors.hex(v.inputs.yaScalarHex))
        }

        /// The responder's answer with the typed code and its fixed `yb`.
        func response(to request: PairingRequest, circle: CircleState) throws -> PairingResponse.Started {
            try PairingResponse.make(to: request, code: v.inputs.code, responder: responder.keys.deviceID, signer: responder.signing,
                                     circle: circle, scalarForTesting: try Vectors.hex(v.inputs.ybScalarHex))
        }
    }

    @Test("the pairing code's draw: uniform six digits, draws at or above 4294000000 redrawn")
    func codeDraws() throws {
        let v = try Setting().v
        #expect(v.codeDraws.count == 7)
        for draw in v.codeDraws {
            #expect(KeyVaultProtocol.Pairing.code(fromDraw: try Vectors.hex(draw.randomHex)) ?? "rejected" == draw.result, "\(draw.randomHex)")
        }
        #expect(KeyVaultProtocol.Pairing.code(fromDraw: try Vectors.hex(v.inputs.codeRandomHex)) == v.inputs.code)
        #expect(KeyVaultProtocol.Pairing.isCode(KeyVaultProtocol.Pairing.drawCode()))
    }

    @Test("one whole exchange, byte for byte: request, response, confirmation, approve entry and approval; CI, ADa, ADb, Ya, Yb, ISK, Ta, Tb")
    func wholeExchange() throws {
        let s = try Setting()
        let v = s.v
        var circle = try s.circle([v.genesisHex])
        #expect(circle.headHash.hex == v.genesisHash)
        #expect(s.newDevice.keys.deviceID.hex == v.deviceIdNew)
        #expect(s.responder.keys.deviceID.hex == v.deviceIdResponder)
        #expect(Hex.encode(KeyVaultProtocol.Pairing.channelID(account: s.account, device: s.newDevice.keys)) == v.ciHex)
        #expect(Hex.encode(KeyVaultProtocol.Pairing.initiatorData(deviceID: DeviceID(testHex: v.deviceIdNew))) == v.adaHex)

        let started = try s.request(headHash: circle.headHash)
        let request = started.request
        #expect(Hex.encode(request.session) == v.sidHex)
        #expect(Hex.encode(request.share) == v.yaHex)
        #expect(Hex.encode(request.encoded) == v.requestHex)
        #expect(request.hash.hex == v.requestHash)
        #expect(try PairingRequest.decode(request.encoded) == request)

        let answering = try s.response(to: request, circle: circle)
        let response = answering.response
        #expect(Hex.encode(response.responderData) == v.adbHex)
        #expect(Hex.encode(response.share) == v.ybHex)
        #expect(Hex.encode(response.confirmation) == v.tbHex)
        #expect(Hex.encode(response.encoded) == v.responseHex)
        #expect(response.hash.hex == v.responseHash)
        #expect(try PairingResponse.accept(response.encoded, in: circle) == response)

        guard case .confirmed(let confirmation, let newDeviceKey) = KeyVaultProtocol.Pairing.answer(
            response, to: request, initiator: started.takeInitiator(), circle: circle, signer: s.newDevice.signing) else {
            Issue.record("the new device did not confirm the genuine response")
            return
        }
        #expect(Hex.encode(confirmation.confirmation) == v.taHex)
        #expect(Hex.encode(confirmation.encoded) == v.confirmationHex)
        #expect(newDeviceKey.bytes.hexEncodedString() == v.iskHex)
        #expect(try PairingConfirmation.decode(confirmation.encoded, request: request) == confirmation)

        let completed = KeyVaultProtocol.Pairing.complete(confirmation, responder: answering.takeResponder())
        let responderKey = try #require(completed)
        #expect(responderKey.constantTimeEquals(newDeviceKey))

        let approve = circle.nextEntry(.approve(device: request.device, requestHash: request.hash), signer: s.responder.signing,
                                       signerID: s.responder.keys.deviceID, at: s.approvedAt)
        #expect(Hex.encode(approve.encoded) == v.approveHex)
        #expect(approve.hash.hex == v.approveHash)
        let genesisHash = circle.headHash
        let approval = PairingApproval.make(entry: approve, request: request, genesisHash: genesisHash, sessionKey: responderKey,
                                            signer: s.responder.signing)
        #expect(PairingApproval.key(responderKey).hexEncodedString() == v.approvalKeyHex)
        #expect(Hex.encode(approval.tag) == v.approvalTagHex)
        #expect(Hex.encode(approval.encoded) == v.approvalHex)
        try circle.apply(approve)
        let decoded = try PairingApproval.decode(approval.encoded) { circle.members[$0]?.keys.signing }
        #expect(KeyVaultProtocol.Pairing.isAuthenticApproval(decoded, of: approve, request: request, sessionKey: newDeviceKey, circle: circle))
    }

    @Test("every pairing case ends in its one expected outcome")
    func cases() throws {
        let s = try Setting()
        let v = s.v
        #expect(v.cases.count == Self.caseCount)
        let genuineRequest = try PairingRequest.decode(try Vectors.hex(v.requestHex))
        for c in v.cases {
            let circle = try s.circle(c.log)
            let bytes = try Vectors.hex(c.hex)
            let outcome: String
            do {
                outcome = try Self.run(c.record, bytes, setting: s, circle: circle, request: genuineRequest)
            } catch let error as ProtocolError {
                outcome = ProtocolVectorTests.outcome(error)
            }
            #expect(outcome == c.expect, "\(c.name)")
        }
    }

    /// The vectors are only as good as their independent source: the Python
    /// implementation must still compute exactly this file, and its CPace must
    /// still pass the draft's own vectors and RFC 9496's.
    @Test("tools/protocol-vectors.py --check and tools/cpace_ref.py --check pass")
    func independentImplementationAgrees() throws {
        for arguments in [["tools/protocol-vectors.py", "--check"], ["tools/cpace_ref.py", "--check"]] {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
            process.arguments = arguments
            process.currentDirectoryURL = Vectors.repositoryRoot
            process.standardOutput = FileHandle.nullDevice
            let errors = Pipe()
            process.standardError = errors
            try process.run()
            let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "\(arguments.joined(separator: " ")): \(message)")
        }
    }

    /// One case as its receiver meets it (PAIRING.md's rules, in their order).
    static func run(_ record: String, _ bytes: [UInt8], setting s: Setting, circle: CircleState, request genuine: PairingRequest) throws -> String {
        switch record {
        case "pairingRequest":
            let request = try PairingRequest.decode(bytes)
            guard request.account == circle.account else { throw ProtocolError.invalid("a request for another account") }
            return "accepted"
        case "pairingResponse":
            // The new device, holding `ya` for its genuine request.
            let started = try s.request(headHash: genuine.headHash)
            #expect(started.request == genuine)
            let response = try PairingResponse.accept(bytes, in: circle)
            guard response.requestHash == genuine.hash else { return "ignored" }
            switch KeyVaultProtocol.Pairing.answer(response, to: genuine, initiator: started.takeInitiator(), circle: circle, signer: s.newDevice.signing) {
            case .confirmed: return "accepted"
            case .mismatch(let refusal, .confirmationFailed):
                #expect(refusal.isRefusal)
                return "confirmationFailed"
            case .mismatch(_, .otherCircle): return "invalid"
            }
        case "pairingConfirmation":
            // The responder, holding `yb` and the typed code for its response to the genuine request.
            let answering = try s.response(to: genuine, circle: circle)
            let confirmation = try PairingConfirmation.decode(bytes, request: genuine)
            guard confirmation.responseHash == answering.response.hash else { return "ignored" }
            return KeyVaultProtocol.Pairing.complete(confirmation, responder: answering.takeResponder()) == nil ? "confirmationFailed" : "accepted"
        case "pairingApproval":
            // The new device, holding the exchange's ISK; the approve entry is in its log.
            let sessionKey = CPace.SessionKey(bytes: SecureBytes(copying: try Vectors.hex(s.v.iskHex)))
            let approval = try PairingApproval.decode(bytes) { circle.isTrusted($0) ? circle.members[$0]?.keys.signing : nil }
            guard approval.account == circle.account else { throw ProtocolError.invalid("an approval for another account") }
            guard approval.requestHash == genuine.hash else { return "ignored" }
            guard let entry = circle.entries.first(where: { $0.hash == approval.entryHash }),
                  KeyVaultProtocol.Pairing.isAuthenticApproval(approval, of: entry, request: genuine, sessionKey: sessionKey, circle: circle) else {
                throw ProtocolError.invalid("the approval does not authenticate an approve entry of this device's request")
            }
            return "accepted"
        default:
            throw VectorError("unknown record kind \(record)")
        }
    }
}
