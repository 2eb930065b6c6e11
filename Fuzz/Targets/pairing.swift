// Fuzz target `pairing`: the enrollment records a relay (or a device that wants
// in) hands a device, version 2 (PAIRING.md: request, response, confirmation,
// approval) and version 1 (PROTOCOL.md: request, challenge, reveal), through
// their decoders and into the `Enrollment` machine of the device that takes them.
//
// The fixed circle: device 0 founded it (the trusted device, the responder);
// device 1 asks to join with the vectors' code, session and scalars, so the
// harness holds the real exchange (its request, response, confirmation,
// approval) and the records in the vectors decode against it.
//
// Input: `u8 mode, u8 signer`, then the record. signer 254: the rest is the
// whole record as the relay's row holds it; otherwise the rest is its signed
// bytes, and the harness signs them with fixed device `signer` (255: a zero
// signature), so a body the fuzzer changed still passes the signature check.
// Modes (mode % 8): 0 PairingRequest, 1 PairingResponse, 2 PairingConfirmation,
// 3 PairingApproval, 4 EnrollmentRequest, 5 EnrollmentChallenge,
// 6 EnrollmentReveal, 7 the label and request-hash probes the relay rows are sorted by.
import Foundation
import KeyVaultCrypto
@testable import KeyVaultProtocol
import KeyVaultAccount
import FuzzSupport

let code = "042917"
let session = [UInt8](repeating: 0x23, count: 16)
let initiatorScalar = [UInt8](repeating: 0x21, count: 31) + [0x01]
let responderScalar = [UInt8](repeating: 0x22, count: 31) + [0x02]
let requestedAt = Date(timeIntervalSince1970: 1_795_300_060)
let me = FuzzKeys.deviceIDs[0]
let lifetime: TimeInterval = 3600

/// The circle as both devices verified it: the genesis alone.
let founded: CircleState = {
    var circle = CircleState(account: FuzzKeys.account)
    try! circle.apply(FuzzKeys.genesis())
    return circle
}()

func newRequest() -> PairingRequest.Started {
    try! PairingRequest.make(account: FuzzKeys.account, device: FuzzKeys.deviceKeys[1], signer: FuzzKeys.devices[1].signing, code: code,
                             session: session, headHash: founded.headHash, at: requestedAt, scalarForTesting: initiatorScalar)
}

func newResponse(to request: PairingRequest) -> PairingResponse.Started {
    try! PairingResponse.make(to: request, code: code, responder: me, signer: FuzzKeys.devices[0].signing, circle: founded,
                              scalarForTesting: responderScalar)
}

struct Exchange: Sendable {
    var request: PairingRequest
    var response: PairingResponse
    var confirmation: PairingConfirmation
    /// The joining device's machine once it sent its confirmation: waiting for the approval.
    var joining: Enrollment
    /// The circle with device 1's approve entry.
    var approved: CircleState
    var approval: PairingApproval
}

let exchange: Exchange = {
    let started = newRequest()
    let request = started.request
    let responded = newResponse(to: request)
    let response = responded.response
    var joining = Enrollment()
    joining.requested(request, code: code)
    let answer = Pairing.answer(response, to: request, initiator: started.takeInitiator(), circle: founded, signer: FuzzKeys.devices[1].signing)
    guard case .confirmed(let confirmation, _) = answer else { fatalError("the vectors' exchange does not confirm") }
    joining.answered(answer)
    let key = Pairing.complete(confirmation, responder: responded.takeResponder())!
    var approved = founded
    let entry = approved.nextEntry(.approve(device: request.device, requestHash: request.hash), signer: FuzzKeys.devices[0].signing,
                                   signerID: me, at: requestedAt.addingTimeInterval(60))
    try! approved.apply(entry)
    let approval = PairingApproval.make(entry: entry, request: request, genesisHash: founded.headHash, sessionKey: key,
                                        signer: FuzzKeys.devices[0].signing)
    return Exchange(request: request, response: response, confirmation: confirmation, joining: joining, approved: approved, approval: approval)
}()

/// Version 1: device 1's request, device 0's challenge.
let secret = [UInt8](repeating: 0x11, count: 32)
let v1Request = EnrollmentRequest.make(account: FuzzKeys.account, device: FuzzKeys.deviceKeys[1], signer: FuzzKeys.devices[1].signing,
                                       headHash: founded.headHash, secret: secret, at: requestedAt)
/// With the vectors' nonce (`make` draws a random one), so the reveals among the seeds match it.
let v1Challenge: EnrollmentChallenge = {
    var challenge = EnrollmentChallenge(account: FuzzKeys.account, requestHash: v1Request.hash, challenger: me,
                                        nonce: [UInt8](repeating: 0x12, count: 32), signature: [])
    challenge.signature = FuzzKeys.devices[0].signing.signature(for: challenge.signedBytes)
    return challenge
}()

func signingKey(_ id: DeviceID) -> SigningPublicKey? {
    FuzzKeys.deviceIDs.firstIndex(of: id).map { FuzzKeys.deviceKeys[$0].signing }
}

/// The trusted device's machine, holding `request` as it was read from the relay.
func trusted(holding request: PairingRequest) -> Enrollment {
    var machine = Enrollment()
    _ = machine.requestArrived(request, circle: founded, me: me, at: FuzzKeys.now)
    return machine
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let mode = input.u8() % 8, signer = input.u8()
    let record = signer == 254 ? input.rest() : resigned(input.rest(), by: signer)
    switch mode {
    case 0:
        guard let request = try? PairingRequest.decode(record) else { break }
        precondition(request.encoded == record, "a decoded pairing request encodes to other bytes")
        _ = Millis.of(request.requestedDate)
        var machine = Enrollment()
        if machine.requestArrived(request, circle: founded, me: me, at: FuzzKeys.now) {
            _ = machine.live(at: FuzzKeys.now, lifetime: lifetime)
            if case .respond(let asked) = machine.answer(for: request.device.deviceID, at: FuzzKeys.now, lifetime: lifetime) {
                // A person typed the code: the responder's half of CPace runs on the request's share.
                if let started = try? PairingResponse.make(to: asked, code: code, responder: me, signer: FuzzKeys.devices[0].signing,
                                                           circle: founded) {
                    machine.responded(to: asked)
                    trace("request answered: \(started.response.encoded.count) bytes")
                }
            }
            machine.circleChanged(exchange.approved)
            _ = machine.dismiss(request.device.deviceID)
        }
    case 1:
        guard let response = try? PairingResponse.accept(record, in: founded) else { break }
        precondition(response.encoded == record, "a decoded pairing response encodes to other bytes")
        var joining = Enrollment()
        let started = newRequest()
        let request = started.request
        joining.requested(request, code: code)
        if joining.takes(response) {
            let initiator = started.takeInitiator()
            joining.answered(Pairing.answer(response, to: request, initiator: initiator, circle: founded, signer: FuzzKeys.devices[1].signing))
        }
        trace("response: \(joining.progress)")
    case 2:
        if let confirmation = try? PairingConfirmation.decode(record, request: exchange.request) {
            precondition(confirmation.encoded == record, "a decoded pairing confirmation encodes to other bytes")
            // The responder that made the vectors' response checks Ta.
            trace("confirmation: key \(Pairing.complete(confirmation, responder: newResponse(to: exchange.request).takeResponder()) != nil)")
        }
        var machine = trusted(holding: exchange.request)
        if (try? machine.confirmationArrived(record)) == true {
            _ = machine.confirmation(of: exchange.response)
        }
    case 3:
        guard let approval = try? PairingApproval.decode(record, key: signingKey) else { break }
        precondition(approval.encoded == record, "a decoded pairing approval encodes to other bytes")
        var joining = exchange.joining
        joining.approvalArrived(approval)
        _ = joining.authenticate(in: founded)
        trace("approval: \(joining.authenticate(in: exchange.approved))")
        _ = joining.trustsItsCircle
    case 4:
        guard let request = try? EnrollmentRequest.decode(record) else { break }
        precondition(request.encoded == record, "a decoded enrollment request encodes to other bytes")
        var machine = Enrollment()
        if machine.retiredRequestArrived(device: request.device, headHash: request.headHash, requestedAt: request.requestedDate,
                                         circle: founded, me: me, at: FuzzKeys.now) {
            trace("v1 request listed: \(machine.retiredLive(at: FuzzKeys.now, lifetime: lifetime).count)")
            _ = machine.answer(for: request.device.deviceID, at: FuzzKeys.now, lifetime: lifetime)
        }
    case 5:
        if let challenge = try? EnrollmentChallenge.accept(record, in: founded) {
            precondition(challenge.encoded == record, "a decoded challenge encodes to other bytes")
            trace("challenge: code \(PairingCode.derive(requestHash: challenge.requestHash, challenge: challenge.nonce, secret: secret))")
        }
    case 6:
        if let reveal = try? EnrollmentReveal.accept(record, for: v1Request, challengeAccepted: { $0 == v1Challenge.hash }) {
            precondition(reveal.encoded == record, "a decoded reveal encodes to other bytes")
            trace("reveal accepted")
        }
    default:
        _ = SignedEnvelope.label(of: record)
        _ = PairingConfirmation.requestHash(of: record)
        _ = SignedEnvelope.requestHash(of: record, labels: [Labels.enrollReveal, Labels.pairingConfirm, Labels.pairingApproval,
                                                            Labels.pairingResponse, Labels.enrollChallenge])
    }
    return 0
}
