import Foundation
package import KeyVaultProtocol

// The account's side of pairing: each event handed to its `Enrollment` machine with what
// the account knows (its circle, this device), so the engine never steps the machine itself.
extension AccountState {
    /// This device asked to join with `request`, whose code it shows.
    mutating func requestedToJoin(_ request: PairingRequest, code: String) {
        enrollment.requested(request, code: code)
    }

    /// A joining device's answer to the response it took (confirmed, or a mismatch).
    mutating func answered(_ answer: Pairing.Answer) {
        enrollment.answered(answer)
    }

    /// An approval for this joining device arrived; it is checked by `authenticateApproval`.
    mutating func approvalArrived(_ approval: PairingApproval) {
        enrollment.approvalArrived(approval)
    }

    /// Whether the approval that arrived verifies under the exchange's key in the circle as it is now.
    mutating func authenticateApproval() -> Enrollment.ApprovalCheck {
        enrollment.authenticate(in: circle)
    }

    /// A request to join this circle arrived from the relay at `now`: kept (true) if it names its head.
    mutating func requestArrived(_ request: PairingRequest, at now: Date) -> Bool {
        enrollment.requestArrived(request, circle: circle, me: deviceID, at: now)
    }

    /// A pairing version 1 request arrived: kept to be listed with the update it needs, never answered.
    mutating func retiredRequestArrived(device: DeviceKeys, headHash: LogHash, requestedAt: Date, at now: Date) -> Bool {
        enrollment.retiredRequestArrived(device: device, headHash: headHash, requestedAt: requestedAt, circle: circle, me: deviceID, at: now)
    }

    /// This trusted device responded to `request` (its exchange's state lives beside, in memory).
    mutating func responded(to request: PairingRequest) {
        enrollment.responded(to: request)
    }

    /// A new device's confirmation (or refusal) of a response: true if it answers a request held here.
    mutating func confirmationArrived(_ body: [UInt8]) throws(ProtocolError) -> Bool {
        try enrollment.confirmationArrived(body)
    }

    /// A request a person dismissed, once the vault keeps the dismissal. False: no such request.
    mutating func dismiss(_ device: DeviceID) -> Bool {
        enrollment.dismiss(device)
    }

    /// Whether a request from `device` is held here to dismiss.
    package func mayDismiss(_ device: DeviceID) -> Bool {
        enrollment.holdsRequest(from: device)
    }
}

// The account's side of promotions: its `Promotions` machine stepped with the account's circle.
extension AccountState {
    /// This device announced `keyID`, to promote by `deadline` (kept in the vault with the announce).
    mutating func announcedPromotion(keyID: KeyID, deadline: Date) {
        _ = promotions.announced(keyID: keyID, deadline: deadline)
    }

    /// Checks a device's acknowledgement against the circle (on a snapshot: no lock is held).
    package func verify(_ ack: ShareAck) throws(ProtocolError) -> Promotions.VerifiedAck {
        try Promotions.verify(ack, circle: circle)
    }

    /// A device acknowledged a key: what to do now (promote once every device has).
    mutating func acknowledged(_ verified: Promotions.VerifiedAck, at now: Date) throws(ProtocolError) -> [Promotions.Effect] {
        try promotions.acknowledged(verified, circle: circle, me: deviceID, at: now)
    }

    /// `keyID` was promoted: answers the deadlines the vault no longer needs to keep.
    mutating func promoted(keyID: KeyID) -> [KeyID] {
        promotions.promoted(keyID: keyID).compactMap { if case .clearDeadline(let done) = $0 { done } else { nil } }
    }
}
