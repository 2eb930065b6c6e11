package import FoundationEssentials
package import KeyVaultCrypto

/// A new device's version 2 request to join an account's circle
/// (docs/PAIRING.md): its keys, a fresh session and its half of the CPace
/// exchange, `Ya`, signed by its own key. Published as a `request` row.
package struct PairingRequest: Sendable, Equatable {
    package var account: AccountID
    package var device: DeviceKeys
    /// CPace's sid: 16 random bytes, fresh per request.
    package var session: [UInt8]
    /// CPace's `Ya`.
    package var share: [UInt8]
    /// The circle head the new device verified when it asked.
    package var headHash: LogHash
    package var requestedAt: UInt64
    package var signature: [UInt8]

    package static let sessionByteCount = 16

    package static func signedBytes(account: AccountID, device: DeviceKeys, session: [UInt8], share: [UInt8],
                                    headHash: LogHash, requestedAt: UInt64) -> [UInt8] {
        var w = FieldWriter()
        w.string(Labels.pairingRequest)
        w.string(account.rawValue)
        device.write(to: &w)
        w.bytes(session)
        w.bytes(share)
        w.hash(headHash)
        w.u64(requestedAt)
        return w.bytes
    }

    /// A request for `code`.
    package static func make(account: AccountID, device: DeviceKeys, signer: SigningKey, code: String, headHash: LogHash,
                            at date: Date) throws -> Started {
        try make(account: account, device: device, signer: signer, code: code, session: Random.bytes(sessionByteCount),
                 headHash: headHash, at: date) { inputs, data in try CPace.Initiator(inputs: inputs, associatedData: data) }
    }

    /// The same with a chosen session and scalar: for vectors only.
    package static func make(account: AccountID, device: DeviceKeys, signer: SigningKey, code: String, session: [UInt8],
                             headHash: LogHash, at date: Date, scalarForTesting scalar: [UInt8]) throws -> Started {
        try make(account: account, device: device, signer: signer, code: code, session: session, headHash: headHash, at: date) { inputs, data in
            try CPace.Initiator(inputs: inputs, associatedData: data,
                                scalarForTesting: Ristretto255.Scalar(reducing: SecureBytes(copying: scalar)))
        }
    }

    private static func make(account: AccountID, device: DeviceKeys, signer: SigningKey, code: String, session: [UInt8], headHash: LogHash,
                             at date: Date, initiator: (CPace.Inputs, [UInt8]) throws -> CPace.Initiator) throws -> Started {
        precondition(Pairing.isCode(code) && session.count == sessionByteCount)
        let started = try initiator(Pairing.inputs(code: code, account: account, device: device, session: session),
                                    Pairing.initiatorData(deviceID: device.deviceID))
        let at = Millis.of(date)
        let share = started.message.share
        let bytes = signedBytes(account: account, device: device, session: session, share: share, headHash: headHash, requestedAt: at)
        let request = PairingRequest(account: account, device: device, session: session, share: share, headHash: headHash,
                                     requestedAt: at, signature: signer.signature(for: bytes))
        return Started(request: request, initiator: started)
    }

    /// A request just made, and the initiator that alone can finish its exchange
    /// (kept in memory only: a restart abandons the request).
    package struct Started: ~Copyable, Sendable {
        package let request: PairingRequest
        let initiator: CPace.Initiator

        /// The initiator, for the account's owner to keep until the response comes.
        package consuming func takeInitiator() -> CPace.Initiator { initiator }
    }

    package var encoded: [UInt8] {
        SignedEnvelope.encode(Self.signedBytes(account: account, device: device, session: session, share: share, headHash: headHash,
                                               requestedAt: requestedAt), signature)
    }

    /// Decodes and checks the self-signature; a share that is not a ristretto255
    /// element, or is the identity, is `malformed`.
    package static func decode(_ data: [UInt8]) throws(ProtocolError) -> PairingRequest {
        let (signed, signature) = try SignedEnvelope.decode(data)
        var r = FieldReader(signed)
        try r.label(Labels.pairingRequest)
        guard let account = try? AccountID(validating: try r.string()) else { throw .malformed("bad account ID") }
        let device = try DeviceKeys.read(from: &r)
        let session = try r.bytes(count: sessionByteCount, "a session")
        let share = try Pairing.element(try r.bytes(count: 32, "a share"))
        let head: LogHash = try r.hash32("a head hash")
        let at = try r.millis()
        try r.finish()
        guard device.signing.isValidSignature(signature, for: signed) else { throw .badSignature("an enrollment request") }
        return PairingRequest(account: account, device: device, session: session, share: share, headHash: head, requestedAt: at,
                              signature: signature)
    }

    /// Names the request in the response, confirmation, approval and approve entry.
    package var hash: RequestHash { RequestHash(computed: LabeledHash.hash(label: Labels.pairingRequestHash, parts: [encoded])) }

    package var requestedDate: Date { Millis.date(requestedAt) }

    /// CPace's `Ya, ADa` as the responder takes them.
    func initiatorMessage() throws(ProtocolError) -> CPace.Message {
        do {
            return try CPace.Message(share: share, associatedData: Pairing.initiatorData(deviceID: device.deviceID))
        } catch {
            throw .malformed("a share that is not a ristretto255 element")
        }
    }
}

extension Pairing {
    /// A share as records carry it: a canonical ristretto255 encoding, not the identity.
    static func element(_ bytes: [UInt8]) throws(ProtocolError) -> [UInt8] {
        guard bytes.contains(where: { $0 != 0 }), (try? CPace.Message(share: bytes, associatedData: [])) != nil else {
            throw .malformed("a share that is not a ristretto255 element other than the identity")
        }
        return bytes
    }
}
