package import KeyVaultCrypto

/// The approver's proof, under the exchange's key, that the device that knew
/// the code approved exactly this entry (docs/PAIRING.md): the entry's hash
/// covers the new device's keys, the request and the head it was approved at.
/// Signed by the approver, published with the `approve` entry as a `challenge` row.
package struct PairingApproval: Sendable, Equatable {
    package var account: AccountID
    package var requestHash: RequestHash
    package var approver: DeviceID
    package var entryHash: LogHash
    package var tag: [UInt8]
    package var signature: [UInt8]

    package var signedBytes: [UInt8] {
        var w = FieldWriter()
        w.string(Labels.pairingApproval)
        w.string(account.rawValue)
        w.hash(requestHash)
        w.string(approver.hex)
        w.hash(entryHash)
        w.bytes(tag)
        return w.bytes
    }

    package var encoded: [UInt8] { SignedEnvelope.encode(signedBytes, signature) }

    /// `approval_key = SHA-512(field(label) || field(ISK))`, in secure memory.
    package static func key(_ sessionKey: CPace.SessionKey) -> SecureBytes {
        var prefix = FieldWriter()
        prefix.string(Labels.pairingApprovalKey)
        // field(ISK) = u32be(64) || ISK, the ISK read from secure memory as it is hashed.
        let iskLength: [UInt8] = [0, 0, 0, UInt8(CPace.sessionKeyByteCount)]
        return SHA512.secureHash([.bytes(prefix.bytes + iskLength), .secret(sessionKey.bytes)])
    }

    package static func tag(_ sessionKey: CPace.SessionKey, account: AccountID, requestHash: RequestHash, entryHash: LogHash,
                            genesisHash: LogHash) -> [UInt8] {
        var w = FieldWriter()
        w.string(Labels.pairingApproval)
        w.string(account.rawValue)
        w.hash(requestHash)
        w.hash(entryHash)
        w.hash(genesisHash)
        return HMACSHA512.authenticate(w.bytes, key: key(sessionKey))
    }

    /// The approval of `entry` (an `approve` entry for the request), by the device that signed it.
    package static func make(entry: LogEntry, request: PairingRequest, genesisHash: LogHash, sessionKey: CPace.SessionKey,
                            signer: SigningKey) -> PairingApproval {
        var approval = PairingApproval(account: request.account, requestHash: request.hash, approver: entry.signer, entryHash: entry.hash,
                                       tag: tag(sessionKey, account: request.account, requestHash: request.hash, entryHash: entry.hash,
                                                genesisHash: genesisHash),
                                       signature: [])
        approval.signature = signer.signature(for: approval.signedBytes)
        return approval
    }

    /// Decodes and checks the signature against the approver's key, which the caller looks up in its circle.
    package static func decode(_ data: [UInt8], key: (DeviceID) -> SigningPublicKey?) throws(ProtocolError) -> PairingApproval {
        let (signed, signature) = try SignedEnvelope.decode(data)
        var r = FieldReader(signed)
        try r.label(Labels.pairingApproval)
        guard let account = try? AccountID(validating: try r.string()) else { throw .malformed("bad account ID") }
        let approval = PairingApproval(account: account, requestHash: try r.hash32("a request hash"), approver: try r.deviceID(),
                                       entryHash: try r.hash32("an entry hash"),
                                       tag: try r.bytes(count: CPace.confirmationTagByteCount, "a tag"), signature: signature)
        try r.finish()
        guard let signer = key(approval.approver) else { throw .untrustedSigner(approval.approver) }
        guard signer.isValidSignature(signature, for: signed) else { throw .badSignature("a pairing approval") }
        return approval
    }

    /// Whether the tag is the one the exchange's key gives for this entry in the circle starting at `genesisHash`.
    package func isAuthentic(under sessionKey: CPace.SessionKey, genesisHash: LogHash) -> Bool {
        let expected = Self.tag(sessionKey, account: account, requestHash: requestHash, entryHash: entryHash, genesisHash: genesisHash)
        return ConstantTime.equal(expected, tag)
    }
}
