package import FoundationEssentials
import Dispatch
import Synchronization
package import KeyVaultCrypto

/// One key generation on its way to one device: sign-then-seal. The payload
/// (`u32be(header length) || header || key`) is signed by the sender, and
/// `payload || signature` is sealed with `crypto_box_seal` to the recipient's
/// X25519 key. Only the sealed bytes reach the relay.
package struct KeyShare: Sendable {
    package struct Header: Sendable, Equatable {
        package var account: AccountID
        package var generation: Generation
        package var keyID: KeyID
        package var createdAt: Date
        package var sender: DeviceID
        package var recipient: DeviceID

        package init(account: AccountID, generation: Generation, keyID: KeyID, createdAt: Date, sender: DeviceID, recipient: DeviceID) {
            self.account = account
            self.generation = generation
            self.keyID = keyID
            self.createdAt = createdAt
            self.sender = sender
            self.recipient = recipient
        }

        var encoded: [UInt8] {
            var w = FieldWriter()
            w.string(Labels.share)
            w.string(account.rawValue)
            w.generation(generation)
            w.bytes(keyID.bytes)
            w.u64(Millis.of(createdAt))
            w.string(sender.hex)
            w.string(recipient.hex)
            return w.bytes
        }

        static func decode(_ data: [UInt8]) throws(ProtocolError) -> Header {
            var r = FieldReader(data)
            try r.label(Labels.share)
            guard let account = try? AccountID(validating: try r.string()) else { throw .malformed("bad account ID") }
            let generation = try r.generation()
            let keyID = try r.keyID()
            let createdAt = try r.millis()
            let header = Header(account: account, generation: generation, keyID: keyID,
                                createdAt: Millis.date(createdAt), sender: try r.deviceID(), recipient: try r.deviceID())
            try r.finish()
            return header
        }
    }

    package var header: Header
    package var key: SecretKey

    package init(header: Header, key: SecretKey) {
        self.header = header
        self.key = key
    }

    /// Signs with the sender's key and seals to the recipient.
    package func seal(signer: SigningKey, to recipient: BoxPublicKey) -> [UInt8] {
        let header = framedHeader
        return seal(framedHeader: header, signer: signer, to: recipient, using: SecureScratch(capacity: Self.plainLength(header)))
    }

    private var framedHeader: [UInt8] {
        let encoded = header.encoded
        return LabeledHash.lengthPrefix(encoded.count) + encoded
    }

    private static func plainLength(_ framedHeader: [UInt8]) -> Int {
        framedHeader.count + SecretKey.byteCount + SigningKey.signatureByteCount
    }

    /// Payload and signature are built in `scratch` (locked memory), sealed from there, and wiped.
    private func seal(framedHeader header: [UInt8], signer: SigningKey, to recipient: BoxPublicKey, using scratch: SecureScratch) -> [UInt8] {
        let payloadLength = header.count + SecretKey.byteCount
        return scratch.use(fill: { out in
            out.baseAddress!.copyMemory(from: header, byteCount: header.count)
            key.bytes.withUnsafeBytes { out.baseAddress!.advanced(by: header.count).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            signer.signInPlace(out, messageLength: payloadLength)
            return payloadLength + SigningKey.signatureByteCount
        }) { plain in
            SealedBox.seal(bytes: plain, to: recipient)
        }
    }

    /// Seals one key to many devices, spread over the machine's cores (a
    /// rotation delivers to every trusted device at once), each core reusing
    /// one locked buffer. Order is kept.
    package static func sealAll(key: SecretKey, headers: [Header], recipients: [BoxPublicKey], signer: SigningKey) -> [[UInt8]] {
        precondition(headers.count == recipients.count)
        guard !headers.isEmpty else { return [] }
        let framed = headers.map { KeyShare(header: $0, key: key).framedHeader }
        let capacity = framed.map(plainLength).max() ?? 0
        let workers = min(headers.count, max(1, ProcessInfo.processInfo.activeProcessorCount))
        let results = SealedResults(count: headers.count)
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            let scratch = SecureScratch(capacity: capacity)
            for i in stride(from: worker, to: headers.count, by: workers) {
                results.set(i, KeyShare(header: headers[i], key: key).seal(framedHeader: framed[i], signer: signer, to: recipients[i], using: scratch))
            }
        }
        return results.values
    }

    /// The largest sealed share there can be: a header of at most about 300 bytes
    /// (an account ID of 128, two device IDs), the key, a signature and the box's 48.
    /// A locked device keeps shares unopened (it cannot open them yet): anything
    /// larger is not a share and is refused before it is kept.
    package static let maxSealedByteCount = 1024
    /// The smallest: the box's 48, a length, the key and a signature.
    package static let minSealedByteCount = 48 + 4 + 32 + 64

    /// Opens a sealed share and checks its signature against `senderKey(header.sender)`.
    /// Everything else (the sender was trusted, the key ID, the generation) is the caller's to check.
    package static func open(_ sealed: [UInt8], with key: BoxSecretKey,
                            senderKey: (DeviceID) -> SigningPublicKey?) throws(ProtocolError) -> KeyShare {
        let plain: SecureBytes
        do { plain = try SealedBox.open(sealed, with: key) } catch { throw .malformed("the share does not open with this device's key") }
        let n = plain.count
        guard n >= 4 + 32 + 64 else { throw .malformed("a share is too short") }
        let headerLength = plain.publicBytes(0..<4).reduce(0) { $0 << 8 | Int($1) }
        guard 4 + headerLength + 32 + 64 == n else { throw .malformed("a share's lengths do not add up") }
        let header = try Header.decode(plain.publicBytes(4..<4 + headerLength))
        let signature = plain.publicBytes(n - 64..<n)
        guard let signer = senderKey(header.sender) else { throw .untrustedSigner(header.sender) }
        guard signer.isValidSignature(signature, forSecret: plain.secureSlice(0..<n - 64)) else { throw .badSignature("a key share") }
        let secret: SecretKey
        do { secret = try SecretKey(secureBytes: plain.secureSlice(4 + headerLength..<n - 64)) } catch { throw .malformed("a share's key is not 32 bytes") }
        guard KeyID(of: secret) == header.keyID else { throw .invalid("a share's key does not match its key ID") }
        return KeyShare(header: header, key: secret)
    }

    /// PROTOCOL.md "Key share", rules 1 to 8: opens `sealed` as device `deviceID` (box key pair `key`) and checks it against that device's verified `circle`.
    package static func accept(_ sealed: [UInt8], with key: BoxSecretKey, as deviceID: DeviceID, in circle: CircleState) throws(ProtocolError) -> KeyShare {
        // Rules 1 to 6: opens, lengths, header, a trusted sender, its signature, the key's ID.
        let share = try open(sealed, with: key) { sender in circle.isTrustedDevice(sender) ? circle.members[sender]?.keys.signing : nil }
        let header = share.header
        // Rule 7.
        guard header.account == circle.account, header.recipient == deviceID else { throw .invalid("a share for someone else") }
        // Rule 8: that generation number, announced with that key ID.
        guard circle.generations.contains(where: { $0.generation == header.generation && $0.keyID == header.keyID }) else {
            throw .invalid("a share of generation \(header.generation) that the circle never announced with that key")
        }
        return share
    }
}

/// A device's signed receipt for a generation it now holds.
package struct ShareAck: Sendable, Equatable {
    package var account: AccountID
    package var generation: Generation
    package var keyID: KeyID
    package var deviceID: DeviceID
    package var receivedAt: UInt64
    package var signature: [UInt8]

    package var signedBytes: [UInt8] {
        var w = FieldWriter()
        w.string(Labels.ack)
        w.string(account.rawValue)
        w.generation(generation)
        w.bytes(keyID.bytes)
        w.string(deviceID.hex)
        w.u64(receivedAt)
        return w.bytes
    }

    package static func make(account: AccountID, generation: Generation, keyID: KeyID, deviceID: DeviceID, signer: SigningKey, at date: Date) -> ShareAck {
        var ack = ShareAck(account: account, generation: generation, keyID: keyID, deviceID: deviceID,
                           receivedAt: Millis.of(date), signature: [])
        ack.signature = signer.signature(for: ack.signedBytes)
        return ack
    }

    package var encoded: [UInt8] { SignedEnvelope.encode(signedBytes, signature) }

    package static func decode(_ data: [UInt8]) throws(ProtocolError) -> ShareAck {
        let (signed, signature) = try SignedEnvelope.decode(data)
        var r = FieldReader(signed)
        try r.label(Labels.ack)
        guard let account = try? AccountID(validating: try r.string()) else { throw .malformed("bad account ID") }
        let generation = try r.generation()
        let keyID = try r.keyID()
        let deviceID = try r.deviceID()
        let at = try r.millis()
        try r.finish()
        return ShareAck(account: account, generation: generation, keyID: keyID, deviceID: deviceID, receivedAt: at, signature: signature)
    }

    package func isSigned(by key: SigningPublicKey) -> Bool { key.isValidSignature(signature, for: signedBytes) }
}

/// Slots filled from concurrent iterations, each index written once.
private final class SealedResults: Sendable {
    private let slots: Mutex<[[UInt8]]>
    package init(count: Int) { slots = Mutex(Array(repeating: [], count: count)) }
    package func set(_ index: Int, _ value: [UInt8]) { slots.withLock { $0[index] = value } }
    package var values: [[UInt8]] { slots.withLock { $0 } }
}
