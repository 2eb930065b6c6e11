package import KeyVaultCrypto

/// The exchange's steps as pure functions (docs/PAIRING.md, "Flows"): what
/// each side makes of what it read. The owner of the account keeps the
/// non-copyable CPace state between them and performs the I/O.
extension Pairing {
    /// What the new device makes of the first response to its request.
    package enum Answer: Sendable {
        /// `Tb` verified and the responder's genesis is this circle's: publish
        /// the confirmation; keep the key for the approval.
        case confirmed(PairingConfirmation, CPace.SessionKey)
        /// The code did not match, or the responder sees another circle: publish
        /// the (empty) confirmation; the code is burnt.
        case mismatch(PairingConfirmation, Mismatch)
    }

    package enum Mismatch: Sendable, Equatable, CustomStringConvertible {
        /// `Tb` did not verify: another code, other keys, another session, or a changed message.
        case confirmationFailed
        /// `Tb` verified, but the responder's genesis is not the one this device verified:
        /// the relay showed this device another circle.
        case otherCircle

        package var description: String {
            switch self {
            case .confirmationFailed: return "the pairing code did not match"
            case .otherCircle: return "the trusted device that knew the code sees another circle than the relay showed this device"
            }
        }
    }

    /// The new device takes `response` (accepted under `PairingResponse.accept`,
    /// naming `request`): its initiator is consumed whatever the outcome.
    package static func answer(_ response: PairingResponse, to request: PairingRequest, initiator: consuming CPace.Initiator,
                              circle: CircleState, signer: SigningKey) -> Answer {
        precondition(response.requestHash == request.hash, "a response to another request")
        let refusal = PairingConfirmation.make(request: request, response: response, confirmation: [], signer: signer)
        let finished: CPace.Initiator.Finished
        do {
            let message = try CPace.Message(share: response.share, associatedData: response.responderData)
            let tag = try CPace.ConfirmationTag(rawRepresentation: response.confirmation)
            finished = try initiator.finish(CPace.Response(message: message, confirmation: tag))
        } catch {
            return .mismatch(refusal, .confirmationFailed)
        }
        guard response.genesisHash == circle.entries.first?.hash else {
            return .mismatch(refusal, .otherCircle)
        }
        let confirmation = PairingConfirmation.make(request: request, response: response,
                                                    confirmation: finished.confirmation.rawRepresentation, signer: signer)
        return .confirmed(confirmation, finished.sessionKey)
    }

    /// The trusted device takes the new device's confirmation of its response:
    /// the exchange's key once `Ta` verifies; nil when it does not, or the new
    /// device said the code did not match there. The responder is consumed.
    package static func complete(_ confirmation: PairingConfirmation, responder: consuming CPace.Responder) -> CPace.SessionKey? {
        guard !confirmation.isRefusal, let tag = try? CPace.ConfirmationTag(rawRepresentation: confirmation.confirmation) else { return nil }
        return try? responder.finish(tag)
    }

    /// Whether the new device may count itself a member: `entry` (verified in its
    /// log) approves exactly its request's keys and request, and `approval`,
    /// from the entry's signer, authenticates the entry under the exchange's key.
    package static func isAuthenticApproval(_ approval: PairingApproval, of entry: LogEntry, request: PairingRequest,
                                           sessionKey: CPace.SessionKey, circle: CircleState) -> Bool {
        guard case .approve(let device, let requestHash) = entry.body, device == request.device, requestHash == request.hash,
              approval.requestHash == request.hash, approval.entryHash == entry.hash, approval.approver == entry.signer,
              let genesis = circle.entries.first else { return false }
        return approval.isAuthentic(under: sessionKey, genesisHash: genesis.hash)
    }
}
