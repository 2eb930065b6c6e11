package import FoundationEssentials
package import KeyVaultCrypto

/// One entry of an account's circle log: numbered, chained to the entry
/// before it by hash, and signed by a device the log already trusts.
package struct LogEntry: Sendable, Equatable {
    package enum Body: Sendable, Equatable {
        /// Entry 0: the first device, self-signed, and key generation 1.
        case genesis(device: DeviceKeys, generation: Generation, keyID: KeyID, keyCreatedAt: UInt64)
        /// A new device joins; names the enrollment request it answers (the zero
        /// hash when a recovery kit's member re-joins the account from a new device).
        case approve(device: DeviceKeys, requestHash: RequestHash)
        /// A recovery kit's keys join as a member that receives every later
        /// generation and may sign only an `approve` (PROTOCOL.md, "Recovery").
        case recovery(device: DeviceKeys)
        /// A device leaves.
        case revoke(deviceID: DeviceID)
        /// A new key generation exists.
        case announce(generation: Generation, keyID: KeyID, keyCreatedAt: UInt64)
        /// An announced generation becomes current.
        case promote(generation: Generation, keyID: KeyID)
        /// The account is crypto-shredded on every device; nothing may follow.
        case destroy

        package var kind: String {
            switch self {
            case .genesis: return "genesis"
            case .approve: return "approve"
            case .recovery: return "recovery"
            case .revoke: return "revoke"
            case .announce: return "announce"
            case .promote: return "promote"
            case .destroy: return "destroy"
            }
        }
    }

    package var account: AccountID
    package var seq: LogSeq
    package var previousHash: LogHash
    package var signer: DeviceID
    package var createdAt: UInt64
    package var body: Body
    package var signature: [UInt8]

    package var signedBytes: [UInt8] {
        var w = FieldWriter()
        w.string(Labels.logEntry)
        w.string(account.rawValue)
        w.u64(seq.value)
        w.hash(previousHash)
        w.string(signer.hex)
        w.u64(createdAt)
        w.string(body.kind)
        switch body {
        case .genesis(let device, let generation, let keyID, let keyCreatedAt):
            device.write(to: &w)
            w.generation(generation)
            w.bytes(keyID.bytes)
            w.u64(keyCreatedAt)
        case .approve(let device, let requestHash):
            device.write(to: &w)
            w.hash(requestHash)
        case .recovery(let device):
            device.write(to: &w)
        case .revoke(let deviceID):
            w.string(deviceID.hex)
        case .announce(let generation, let keyID, let keyCreatedAt):
            w.generation(generation)
            w.bytes(keyID.bytes)
            w.u64(keyCreatedAt)
        case .promote(let generation, let keyID):
            w.generation(generation)
            w.bytes(keyID.bytes)
        case .destroy:
            break
        }
        return w.bytes
    }

    package static func make(account: AccountID, seq: LogSeq, previousHash: LogHash, signer: SigningKey, signerID: DeviceID, body: Body, at date: Date) -> LogEntry {
        var entry = LogEntry(account: account, seq: seq, previousHash: previousHash, signer: signerID,
                             createdAt: Millis.of(date), body: body, signature: [])
        entry.signature = signer.signature(for: entry.signedBytes)
        return entry
    }

    package var encoded: [UInt8] { SignedEnvelope.encode(signedBytes, signature) }

    /// The device this entry makes a member (a genesis, an approve, a recovery kit's member), if any:
    /// what the relay service's signer index keeps (RELAY.md, "Who may do what").
    package var admits: DeviceKeys? {
        switch body {
        case .genesis(let device, _, _, _), .approve(let device, _), .recovery(let device): return device
        case .revoke, .announce, .promote, .destroy: return nil
        }
    }

    /// `BLAKE2b-256("keyvault/v1/log-hash", signed bytes, signature)`: what the next entry chains to.
    package var hash: LogHash { LogHash(computed: LabeledHash.hash(label: Labels.logHash, parts: [signedBytes, signature])) }

    /// Decodes the structure only; `CircleState.apply` verifies it.
    package static func decode(_ data: [UInt8]) throws(ProtocolError) -> LogEntry {
        let (signed, signature) = try SignedEnvelope.decode(data)
        var r = FieldReader(signed)
        try r.label(Labels.logEntry)
        guard let account = try? AccountID(validating: try r.string()) else { throw .malformed("bad account ID") }
        let seq = LogSeq(try r.u64())
        let previous: LogHash = try r.hash32("a previous hash")
        let signer = try r.deviceID()
        let createdAt = try r.millis()
        let body: Body
        switch try r.string() {
        case "genesis":
            body = .genesis(device: try DeviceKeys.read(from: &r), generation: try r.generation(), keyID: try r.keyID(), keyCreatedAt: try r.millis())
        case "approve":
            body = .approve(device: try DeviceKeys.read(from: &r), requestHash: try r.hash32("a request hash"))
        case "recovery":
            body = .recovery(device: try DeviceKeys.read(from: &r))
        case "revoke":
            body = .revoke(deviceID: try r.deviceID())
        case "announce":
            body = .announce(generation: try r.generation(), keyID: try r.keyID(), keyCreatedAt: try r.millis())
        case "destroy":
            body = .destroy
        case "promote":
            body = .promote(generation: try r.generation(), keyID: try r.keyID())
        case let other:
            throw .malformed("unknown entry kind '\(other)'")
        }
        try r.finish()
        let entry = LogEntry(account: account, seq: seq, previousHash: previous, signer: signer, createdAt: createdAt, body: body, signature: signature)
        guard entry.signedBytes == signed else { throw .malformed("a non-canonical entry") }
        return entry
    }
}
