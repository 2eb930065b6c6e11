package import KeyVaultCrypto

/// A trusted device's half of a pairing exchange (docs/PAIRING.md), made from
/// the code the person typed there: `Yb`, the circle as the responder sees it
/// (its `ADb`) and `Tb`, signed. Published as a `challenge` row.
package struct PairingResponse: Sendable, Equatable {
    package var account: AccountID
    package var requestHash: RequestHash
    package var responder: DeviceID
    package var share: [UInt8]
    package var genesisHash: LogHash
    package var headHash: LogHash
    package var headSeq: LogSeq
    /// `Tb`, 64 bytes.
    package var confirmation: [UInt8]
    package var signature: [UInt8]

    package var signedBytes: [UInt8] {
        var w = FieldWriter()
        w.string(Labels.pairingResponse)
        w.string(account.rawValue)
        w.hash(requestHash)
        w.string(responder.hex)
        w.bytes(share)
        w.hash(genesisHash)
        w.hash(headHash)
        w.u64(headSeq.value)
        w.bytes(confirmation)
        return w.bytes
    }

    /// A response just made, and the responder that alone can check the new
    /// device's confirmation and yield the exchange's key.
    package struct Started: ~Copyable, Sendable {
        package let response: PairingResponse
        let responder: CPace.Responder

        /// The responder, for the account's owner to keep until the confirmation comes.
        package consuming func takeResponder() -> CPace.Responder { responder }
    }

    package var encoded: [UInt8] { SignedEnvelope.encode(signedBytes, signature) }
    package var hash: ResponseHash { ResponseHash(computed: LabeledHash.hash(label: Labels.pairingResponse, parts: [encoded])) }

    /// CPace's `ADb`: who responds, and the circle it responds from.
    package var responderData: [UInt8] {
        Pairing.responderData(responder: responder, genesisHash: genesisHash, headHash: headHash, headSeq: headSeq)
    }

    /// Answers `request` with the typed `code`, from this device's verified `circle`.
    package static func make(to request: PairingRequest, code: String, responder: DeviceID, signer: SigningKey,
                            circle: CircleState) throws -> Started {
        try make(to: request, code: code, responder: responder, signer: signer, circle: circle) { message, inputs, data in
            try CPace.Responder(respondingTo: message, inputs: inputs, associatedData: data)
        }
    }

    /// The same with a chosen scalar: for vectors only.
    package static func make(to request: PairingRequest, code: String, responder: DeviceID, signer: SigningKey, circle: CircleState,
                             scalarForTesting scalar: [UInt8]) throws -> Started {
        try make(to: request, code: code, responder: responder, signer: signer, circle: circle) { message, inputs, data in
            try CPace.Responder(respondingTo: message, inputs: inputs, associatedData: data,
                                scalarForTesting: Ristretto255.Scalar(reducing: SecureBytes(copying: scalar)))
        }
    }

    private static func make(to request: PairingRequest, code: String, responder: DeviceID, signer: SigningKey, circle: CircleState,
                             start: (CPace.Message, CPace.Inputs, [UInt8]) throws -> CPace.Responder) throws -> Started {
        precondition(Pairing.isCode(code))
        guard let genesis = circle.entries.first, let head = circle.entries.last else { throw ProtocolError.invalid("an empty circle cannot approve") }
        var response = PairingResponse(account: request.account, requestHash: request.hash, responder: responder, share: [],
                                       genesisHash: genesis.hash, headHash: head.hash, headSeq: head.seq, confirmation: [], signature: [])
        let inputs = Pairing.inputs(code: code, account: request.account, device: request.device, session: request.session)
        let started = try start(try request.initiatorMessage(), inputs, response.responderData)
        response.share = started.response.message.share
        response.confirmation = started.response.confirmation.rawRepresentation
        response.signature = signer.signature(for: response.signedBytes)
        return Started(response: response, responder: started)
    }

    /// Decodes and checks the signature against the responder's key, which the caller looks up in its circle.
    package static func decode(_ data: [UInt8], key: (DeviceID) -> SigningPublicKey?) throws(ProtocolError) -> PairingResponse {
        let (signed, signature) = try SignedEnvelope.decode(data)
        var r = FieldReader(signed)
        try r.label(Labels.pairingResponse)
        guard let account = try? AccountID(validating: try r.string()) else { throw .malformed("bad account ID") }
        let response = PairingResponse(
            account: account, requestHash: try r.hash32("a request hash"), responder: try r.deviceID(),
            share: try Pairing.element(try r.bytes(count: 32, "a share")), genesisHash: try r.hash32("a genesis hash"),
            headHash: try r.hash32("a head hash"), headSeq: LogSeq(try r.u64()),
            confirmation: try r.bytes(count: CPace.confirmationTagByteCount, "a confirmation"), signature: signature)
        try r.finish()
        guard let signer = key(response.responder) else { throw .untrustedSigner(response.responder) }
        guard signer.isValidSignature(signature, for: signed) else { throw .badSignature("a pairing response") }
        return response
    }

    /// Every rule of docs/PAIRING.md's "Pairing response": the responder a trusted member of `circle`, the account the circle's.
    package static func accept(_ data: [UInt8], in circle: CircleState) throws(ProtocolError) -> PairingResponse {
        let response = try decode(data) { circle.isTrusted($0) ? circle.members[$0]?.keys.signing : nil }
        guard response.account == circle.account else { throw .invalid("a pairing response for another account") }
        return response
    }
}
