import KeyVaultCrypto
import KeyVaultProtocol

/// An enrollment request as the relay stores it, of either pairing version:
/// version 1 (commit, challenge, reveal; PROTOCOL.md) or version 2 (CPace;
/// PAIRING.md). The relay checks each against its own rules; both travel in
/// `request` rows, and their answers in `challenge` and `reveal` rows.
enum FiledRequest: Sendable {
    case commitReveal(EnrollmentRequest)
    case pake(PairingRequest)

    static func decode(_ body: [UInt8]) throws(ProtocolError) -> FiledRequest {
        if SignedEnvelope.label(of: body) == Labels.pairingRequest { return .pake(try PairingRequest.decode(body)) }
        return .commitReveal(try EnrollmentRequest.decode(body))
    }

    var account: AccountID {
        switch self {
        case .commitReveal(let request): return request.account
        case .pake(let request): return request.account
        }
    }

    var deviceID: DeviceID {
        switch self {
        case .commitReveal(let request): return request.device.deviceID
        case .pake(let request): return request.device.deviceID
        }
    }

    var hash: RequestHash {
        switch self {
        case .commitReveal(let request): return request.hash
        case .pake(let request): return request.hash
        }
    }

    /// Which request a `reveal` row answers: a version 1 reveal or a version 2 confirmation.
    static func requestHash(ofReveal body: [UInt8]) -> RequestHash? {
        SignedEnvelope.requestHash(of: body, labels: [Labels.enrollReveal, Labels.pairingConfirm])
    }

    /// Which request a `challenge` row concerns: a version 1 challenge, or a version 2 response or approval.
    static func requestHash(ofChallenge body: [UInt8]) -> RequestHash? {
        SignedEnvelope.requestHash(of: body, labels: [Labels.enrollChallenge, Labels.pairingResponse, Labels.pairingApproval])
    }

    /// A `reveal` row from this request's device, checked as its version says.
    func checkReveal(_ body: [UInt8]) throws(ProtocolError) {
        switch self {
        case .commitReveal(let request): _ = try EnrollmentReveal.decode(body, request: request)
        case .pake(let request): _ = try PairingConfirmation.decode(body, request: request)
        }
    }

    /// A `challenge` row from a trusted member of `circle`: a version 1 challenge,
    /// a version 2 response, or a version 2 approval.
    static func checkChallenge(_ body: [UInt8], circle: CircleState) throws(ProtocolError) {
        switch SignedEnvelope.label(of: body) {
        case Labels.pairingResponse:
            _ = try PairingResponse.accept(body, in: circle)
        case Labels.pairingApproval:
            let approval = try PairingApproval.decode(body) { circle.isTrusted($0) ? circle.members[$0]?.keys.signing : nil }
            guard approval.account == circle.account else { throw .invalid("a pairing approval for another account") }
        default:
            _ = try EnrollmentChallenge.accept(body, in: circle)
        }
    }
}
