import Foundation
import Testing
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultAccount
import KeyVaultVault

/// A recovery kit's member of the circle (PROTOCOL.md, "Recovery"), decided
/// without I/O: what it may sign, whom it counts as, and the kit's two versions.
@Suite("Recovery: a kit's member of the circle, and the kit's versions")
struct RecoveryMemberTests {
    typealias Device = MachineFixture.Device

    let account = try! AccountID(validating: "recover")
    let a = Device(name: "a")
    let kit = Device(name: "recovery kit")
    let newDevice = Device(name: "new")

    func append(_ circle: inout CircleState, by device: Device, _ body: LogEntry.Body) throws {
        try circle.apply(LogEntry.make(account: account, seq: circle.nextSeq, previousHash: circle.headHash, signer: device.signing,
                                       signerID: device.id, body: body, at: Date(timeIntervalSince1970: 1)))
    }

    /// A's genesis, then the kit's member.
    func base() throws -> CircleState {
        var circle = CircleState(account: account)
        try append(&circle, by: a, .genesis(device: a.keys, generation: 1, keyID: KeyID(of: SecretKey.generate()), keyCreatedAt: 0))
        try append(&circle, by: a, .recovery(device: kit.keys))
        return circle
    }

    @Test("a kit's member gets shares but is no device: never waited on, not the last device, and it may sign only an approve")
    func memberRules() throws {
        var circle = try base()
        #expect(circle.isTrusted(kit.id))
        #expect(!circle.isTrustedDevice(kit.id))
        #expect(circle.trustedDevices.keys.sorted() == [a.id])
        #expect(circle.shareRecipients.keys.sorted() == [a.id, kit.id].sorted())
        // It re-joins the account from a new device (an approve naming no request), and nothing else.
        for body: LogEntry.Body in [.announce(generation: 2, keyID: KeyID(of: SecretKey.generate()), keyCreatedAt: 2), .revoke(deviceID: a.id), .destroy,
                                    .recovery(device: Device(name: "another kit").keys)] {
            var attempt = circle
            #expect(throws: ProtocolError.self, "\(body.kind)") { try append(&attempt, by: kit, body) }
        }
        try append(&circle, by: kit, .approve(device: newDevice.keys, requestHash: .zero))
        #expect(circle.isTrustedDevice(newDevice.id))
        // The new device revokes the lost one; a circle keeps at least one device, whatever kits it has.
        try append(&circle, by: newDevice, .revoke(deviceID: a.id))
        var last = circle
        #expect(throws: ProtocolError.self) { try append(&last, by: newDevice, .revoke(deviceID: newDevice.id)) }
        // The kit's member can be revoked (the kit retired); then it approves no one.
        try append(&circle, by: newDevice, .revoke(deviceID: kit.id))
        var retired = circle
        #expect(throws: ProtocolError.self) { try append(&retired, by: kit, .approve(device: Device(name: "thief").keys, requestHash: .zero)) }
    }

    @Test("a recovery entry round-trips through its encoding, and a share from a kit's member is refused")
    func encodingAndShares() throws {
        var circle = try base()
        let entry = circle.entries[1]
        #expect(try LogEntry.decode(entry.encoded) == entry)
        let key = SecretKey.generate()
        try append(&circle, by: a, .announce(generation: 2, keyID: KeyID(of: key), keyCreatedAt: 2))
        let header = KeyShare.Header(account: account, generation: 2, keyID: KeyID(of: key), createdAt: Date(timeIntervalSince1970: 0.002),
                                     sender: kit.id, recipient: a.id)
        let sealed = KeyShare.sealAll(key: key, headers: [header], recipients: [a.box.publicKey], signer: kit.signing)[0]
        #expect(throws: ProtocolError.self) { try KeyShare.accept(sealed, with: a.box, as: a.id, in: circle) }
    }

    @Test("a version 2 kit carries its member's keys; a version 1 kit (made before) opens with keys only")
    func kitVersions() throws {
        let parameters = try KDFParameters(opsLimit: 1, memLimitBytes: 64 << 10)
        let passphrase = SecureBytes(copying: Array("kit passphrase".utf8))
        let key = SecretKey.generate()
        let kept = RecoveryKit.KeptKey(number: 1, keyID: KeyID(of: key), createdAt: Date(timeIntervalSince1970: 1), key: key)
        let member = DeviceIdentity.generate()
        let v2 = try RecoveryKit.open(try RecoveryKit.seal(account: account, generations: [kept], member: member, passphrase: passphrase,
                                                           parameters: parameters), passphrase: passphrase)
        #expect(v2.member?.deviceID == member.deviceID)
        #expect(v2.keys.map(\.keyID) == [kept.keyID])
        #expect(try RecoveryKit.open(try RecoveryKit.seal(account: account, generations: [kept], passphrase: passphrase, parameters: parameters),
                                     passphrase: passphrase).member == nil)

        // Version 1, as FORMAT.md wrote it before: its label, and the keys with nothing after them.
        let salt = Random.bytes(KDFParameters.saltByteCount)
        var h = FieldWriter()
        h.string(Labels.recoveryKit)
        h.string(account.rawValue)
        h.u64(parameters.opsLimit)
        h.u64(parameters.memLimitBytes)
        h.bytes(salt)
        var plain: [UInt8] = [0, 0, 0, 1, 0, 0, 0, 1] + [UInt8](repeating: 0, count: 7) + [1]
        plain += kept.keyID.bytes
        plain += key.bytes.withUnsafeBytes { Array($0) }
        let kek = try PasswordKDF.deriveKey(passphrase: passphrase, salt: salt, parameters: parameters)
        var w = FieldWriter()
        w.bytes(h.bytes)
        w.bytes(WrapCipher.seal(SecureBytes(copying: plain), key: kek, aad: h.bytes))
        let v1 = try RecoveryKit.open(w.bytes, passphrase: passphrase)
        #expect(v1.member == nil)
        #expect(v1.keys.map(\.keyID) == [kept.keyID])
        // A version 1 kit with a member's bytes after its keys is not one.
        var longer = FieldWriter()
        longer.bytes(h.bytes)
        longer.bytes(WrapCipher.seal(SecureBytes(copying: plain + [0]), key: kek, aad: h.bytes))
        #expect(throws: (any Error).self) { try RecoveryKit.open(longer.bytes, passphrase: passphrase) }
    }
}
