package import KeyVaultCrypto

/// The new device's answer to the response it took (docs/PAIRING.md): `Ta`,
/// or nothing when the code did not match there, signed by the new device so
/// that no relay can fake either. Published as a `reveal` row, once.
package struct PairingConfirmation: Sendable, Equatable {
    package var account: AccountID
    package var requestHash: RequestHash
    package var responseHash: ResponseHash
    /// `Ta` (64 bytes), or empty: the code did not match on the new device.
    package var confirmation: [UInt8]
    package var signature: [UInt8]

    package var isRefusal: Bool { confirmation.isEmpty }

    package var signedBytes: [UInt8] {
        var w = FieldWriter()
        w.string(Labels.pairingConfirm)
        w.string(account.rawValue)
        w.hash(requestHash)
        w.hash(responseHash)
        w.bytes(confirmation)
        return w.bytes
    }

    package var encoded: [UInt8] { SignedEnvelope.encode(signedBytes, signature) }

    package static func make(request: PairingRequest, response: PairingResponse, confirmation: [UInt8], signer: SigningKey) -> PairingConfirmation {
        var c = PairingConfirmation(account: request.account, requestHash: request.hash, responseHash: response.hash,
                                    confirmation: confirmation, signature: [])
        c.signature = signer.signature(for: c.signedBytes)
        return c
    }

    /// Decodes and checks it against the request it names (which the receiver found by `requestHash(of:)`).
    package static func decode(_ data: [UInt8], request: PairingRequest) throws(ProtocolError) -> PairingConfirmation {
        let (signed, signature) = try SignedEnvelope.decode(data)
        var r = FieldReader(signed)
        try r.label(Labels.pairingConfirm)
        guard let account = try? AccountID(validating: try r.string()) else { throw .malformed("bad account ID") }
        let c = PairingConfirmation(account: account, requestHash: try r.hash32("a request hash"),
                                    responseHash: try r.hash32("a response hash"), confirmation: try r.bytes(), signature: signature)
        try r.finish()
        guard c.confirmation.isEmpty || c.confirmation.count == CPace.confirmationTagByteCount else {
            throw .malformed("a confirmation is 64 bytes or empty")
        }
        guard c.account == request.account, c.requestHash == request.hash else { throw .invalid("a confirmation for another request") }
        guard request.device.signing.isValidSignature(signature, for: signed) else { throw .badSignature("a pairing confirmation") }
        return c
    }

    /// Which request a confirmation is for, without checking it (to find the request first).
    package static func requestHash(of data: [UInt8]) -> RequestHash? {
        SignedEnvelope.requestHash(of: data, labels: [Labels.pairingConfirm])
    }
}
