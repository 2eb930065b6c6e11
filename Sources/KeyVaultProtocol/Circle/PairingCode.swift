import FoundationEssentials
package import KeyVaultCrypto

/// The six digits a person reads on the new device and types on a trusted
/// one. Commit, challenge, reveal: the request commits to the new device's
/// secret; a trusted device answers with a fresh nonce; only then does the new
/// device reveal its secret and show the code. A relay that substitutes its
/// own request had to commit before it saw the nonce, so it matches the code
/// with probability 10⁻⁶, and five wrong codes cancel the request.
package enum PairingCode {
    package static func commitment(to secret: [UInt8]) -> [UInt8] {
        LabeledHash.hash(label: Labels.pairingCommit, parts: [secret])
    }

    /// `BLAKE2b-128("keyvault/v1/pairing-code", request hash, challenge nonce, secret)`,
    /// first 8 bytes as u64be, mod 1,000,000, six digits.
    package static func derive(requestHash: RequestHash, challenge: [UInt8], secret: [UInt8]) -> String {
        let digest = LabeledHash.hash(label: Labels.pairingCode, parts: [requestHash.bytes, challenge, secret], outputByteCount: 16)
        let number = digest.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) } % 1_000_000
        let text = String(number)
        return String(repeating: "0", count: 6 - text.count) + text
    }
}

/// A trusted device's answer to a request: a fresh nonce, signed.
package struct EnrollmentChallenge: Sendable, Equatable {
    package var account: AccountID
    package var requestHash: RequestHash
    package var challenger: DeviceID
    package var nonce: [UInt8]
    package var signature: [UInt8]

    package var signedBytes: [UInt8] {
        var w = FieldWriter()
        w.string(Labels.enrollChallenge)
        w.string(account.rawValue)
        w.hash(requestHash)
        w.string(challenger.hex)
        w.bytes(nonce)
        return w.bytes
    }

    package static func make(request: EnrollmentRequest, challenger: DeviceID, signer: SigningKey) -> EnrollmentChallenge {
        var c = EnrollmentChallenge(account: request.account, requestHash: request.hash, challenger: challenger, nonce: Random.bytes(32), signature: [])
        c.signature = signer.signature(for: c.signedBytes)
        return c
    }

    package var encoded: [UInt8] { SignedEnvelope.encode(signedBytes, signature) }

    package var hash: [UInt8] { LabeledHash.hash(label: Labels.enrollChallenge, parts: [encoded]) }

    /// Decodes and checks the signature against the challenger's key, which the caller looks up in its circle.
    package static func decode(_ data: [UInt8], key: (DeviceID) -> SigningPublicKey?) throws(ProtocolError) -> EnrollmentChallenge {
        let (signed, signature) = try SignedEnvelope.decode(data)
        var r = FieldReader(signed)
        try r.label(Labels.enrollChallenge)
        guard let account = try? AccountID(validating: try r.string()) else { throw .malformed("bad account ID") }
        let c = EnrollmentChallenge(account: account, requestHash: try r.hash32("a request hash"), challenger: try r.deviceID(),
                                    nonce: try r.bytes(count: 32, "a nonce"), signature: signature)
        try r.finish()
        guard let signer = key(c.challenger) else { throw .untrustedSigner(c.challenger) }
        guard signer.isValidSignature(signature, for: signed) else { throw .badSignature("a challenge") }
        return c
    }

    /// PROTOCOL.md "Enrollment challenge", every rule: decodes `data`, the challenger a trusted member of the receiver's verified `circle`, the account the circle's.
    package static func accept(_ data: [UInt8], in circle: CircleState) throws(ProtocolError) -> EnrollmentChallenge {
        let challenge = try decode(data) { circle.isTrusted($0) ? circle.members[$0]?.keys.signing : nil }
        guard challenge.account == circle.account else { throw .invalid("a challenge for another account") }
        return challenge
    }
}

/// The new device's reveal of its pairing secret, bound to the challenge it answers.
package struct EnrollmentReveal: Sendable, Equatable {
    package var account: AccountID
    package var requestHash: RequestHash
    package var challengeHash: [UInt8]
    package var secret: [UInt8]
    package var signature: [UInt8]

    package var signedBytes: [UInt8] {
        var w = FieldWriter()
        w.string(Labels.enrollReveal)
        w.string(account.rawValue)
        w.hash(requestHash)
        w.bytes(challengeHash)
        w.bytes(secret)
        return w.bytes
    }

    package static func make(request: EnrollmentRequest, challenge: EnrollmentChallenge, secret: [UInt8], signer: SigningKey) -> EnrollmentReveal {
        var r = EnrollmentReveal(account: request.account, requestHash: request.hash, challengeHash: challenge.hash, secret: secret, signature: [])
        r.signature = signer.signature(for: r.signedBytes)
        return r
    }

    package var encoded: [UInt8] { SignedEnvelope.encode(signedBytes, signature) }

    /// Decodes; checks the signature by the requesting device and the secret against its commitment.
    package static func decode(_ data: [UInt8], request: EnrollmentRequest) throws(ProtocolError) -> EnrollmentReveal {
        let (signed, signature) = try SignedEnvelope.decode(data)
        var r = FieldReader(signed)
        try r.label(Labels.enrollReveal)
        guard let account = try? AccountID(validating: try r.string()) else { throw .malformed("bad account ID") }
        let reveal = EnrollmentReveal(account: account, requestHash: try r.hash32("a request hash"),
                                      challengeHash: try r.bytes(count: 32, "a challenge hash"), secret: try r.bytes(count: 32, "a secret"), signature: signature)
        try r.finish()
        guard reveal.requestHash == request.hash, account == request.account else { throw .invalid("a reveal for another request") }
        guard request.device.signing.isValidSignature(signature, for: signed) else { throw .badSignature("a reveal") }
        guard ConstantTime.equal(PairingCode.commitment(to: reveal.secret), request.commitment) else {
            throw .invalid("a reveal that does not match the request's commitment")
        }
        return reveal
    }

    /// PROTOCOL.md "Enrollment reveal", every rule: `decode(_:request:)`, then `challengeAccepted(challenge hash)` must say the receiver accepted that challenge.
    package static func accept(_ data: [UInt8], for request: EnrollmentRequest, challengeAccepted: ([UInt8]) -> Bool) throws(ProtocolError) -> EnrollmentReveal {
        let reveal = try decode(data, request: request)
        guard challengeAccepted(reveal.challengeHash) else { throw .invalid("a reveal for a challenge no trusted device made") }
        return reveal
    }
}
