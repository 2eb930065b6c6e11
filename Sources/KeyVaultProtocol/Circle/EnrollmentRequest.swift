package import FoundationEssentials
package import KeyVaultCrypto

/// A new device's request to join an account's circle, signed by the new
/// device's own key (proving it holds it). Published to the relay. It commits
/// to a pairing secret the device reveals only after a trusted device has
/// answered with a challenge, so nobody can grind a look-alike request whose
/// code matches (see `PairingCode`).
package struct EnrollmentRequest: Sendable, Equatable {
    package var account: AccountID
    package var device: DeviceKeys
    /// `BLAKE2b-256("keyvault/v1/pairing-commit", secret)`.
    package var commitment: [UInt8]
    /// The circle head the new device saw: the pairing code binds to it.
    package var headHash: LogHash
    package var requestedAt: UInt64
    package var signature: [UInt8]

    package static func signedBytes(account: AccountID, device: DeviceKeys, commitment: [UInt8], headHash: LogHash, requestedAt: UInt64) -> [UInt8] {
        var w = FieldWriter()
        w.string(Labels.enrollRequest)
        w.string(account.rawValue)
        device.write(to: &w)
        w.bytes(commitment)
        w.hash(headHash)
        w.u64(requestedAt)
        return w.bytes
    }

    /// `secret` is the device's pairing secret (32 random bytes), kept until it is revealed.
    package static func make(account: AccountID, device: DeviceKeys, signer: SigningKey, headHash: LogHash, secret: [UInt8], at date: Date) -> EnrollmentRequest {
        let commitment = PairingCode.commitment(to: secret)
        let at = Millis.of(date)
        let bytes = signedBytes(account: account, device: device, commitment: commitment, headHash: headHash, requestedAt: at)
        return EnrollmentRequest(account: account, device: device, commitment: commitment, headHash: headHash, requestedAt: at, signature: signer.signature(for: bytes))
    }

    package var encoded: [UInt8] {
        SignedEnvelope.encode(Self.signedBytes(account: account, device: device, commitment: commitment, headHash: headHash, requestedAt: requestedAt), signature)
    }

    /// Decodes and checks the self-signature.
    package static func decode(_ data: [UInt8]) throws(ProtocolError) -> EnrollmentRequest {
        let (signed, signature) = try SignedEnvelope.decode(data)
        var r = FieldReader(signed)
        try r.label(Labels.enrollRequest)
        guard let account = try? AccountID(validating: try r.string()) else { throw .malformed("bad account ID") }
        let device = try DeviceKeys.read(from: &r)
        let commitment = try r.bytes(count: 32, "a commitment")
        let head: LogHash = try r.hash32("a head hash")
        let at = try r.millis()
        try r.finish()
        guard device.signing.isValidSignature(signature, for: signed) else { throw .badSignature("an enrollment request") }
        return EnrollmentRequest(account: account, device: device, commitment: commitment, headHash: head, requestedAt: at, signature: signature)
    }

    /// Identifies the request in the approval entry.
    package var hash: RequestHash { RequestHash(computed: LabeledHash.hash(label: Labels.requestHash, parts: [encoded])) }

    package var requestedDate: Date { Millis.date(requestedAt) }
}
