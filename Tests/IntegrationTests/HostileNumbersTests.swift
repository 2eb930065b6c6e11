import Foundation
import Testing
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultVault
import KeyVaultRelay

/// Numbers from outside that used to trap the daemon (issue 32, items 1 and 2):
/// each now refused where it enters, or made impossible by the protocol, with
/// the daemon still answering afterwards.
@Suite("Hostile numbers: a generation at the end of its range, a time past the year 9999")
struct HostileNumbersTests {
    /// A version 1 kit, written as FORMAT.md says, holding one key under `generation` made at `ms`.
    static func kit(account: String, generation: UInt32, ms: UInt64, passphrase: String) throws -> String {
        let parameters = try KDFParameters(opsLimit: 1, memLimitBytes: 64 << 10)
        let salt = Random.bytes(KDFParameters.saltByteCount)
        var h = FieldWriter()
        h.string(Labels.recoveryKit)
        h.string(account)
        h.u64(parameters.opsLimit)
        h.u64(parameters.memLimitBytes)
        h.bytes(salt)
        let key = SecretKey.generate()
        var plain: [UInt8] = [0, 0, 0, 1]
        plain += (0..<4).map { UInt8((generation >> UInt32(24 - 8 * $0)) & 0xff) }
        plain += (0..<8).map { UInt8((ms >> UInt64(56 - 8 * $0)) & 0xff) }
        plain += KeyID(of: key).bytes
        plain += key.bytes.withUnsafeBytes { Array($0) }
        let kek = try PasswordKDF.deriveKey(passphrase: SecureBytes(copying: Array(passphrase.utf8)), salt: salt, parameters: parameters)
        var w = FieldWriter()
        w.bytes(h.bytes)
        w.bytes(WrapCipher.seal(SecureBytes(copying: plain), key: kek, aad: h.bytes))
        return Data(w.bytes).base64EncodedString()
    }

    @Test("a kit at generation 2^31 − 1 restores, and a rotation after it is refused, not a crash; a kit made past the year 9999 is refused")
    func kitNumbers() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        try await daemon.start()
        let last = try Self.kit(account: "edge", generation: UInt32(Int32.max), ms: 1_795_300_000_000, passphrase: "kit")
        let imported = try await daemon.request("POST", "/v1/accounts/import", json: ["kit": last, "kitPassphrase": "kit", "passphrase": "p"])
        #expect(imported.status == 200, "\(imported.object)")
        let rotated = try await daemon.request("POST", "/v1/accounts/edge/rotate")
        #expect(rotated.status == 400, "\(rotated.object)")
        #expect(rotated["error"]?.contains("every generation number") == true, "\(rotated.object)")
        #expect(try await daemon.request("GET", "/v1/accounts/edge/keys/current").status == 200)

        for ms in [UInt64(1) << 63, UInt64.max, Millis.max + 1] {
            let late = try Self.kit(account: "late", generation: 1, ms: ms, passphrase: "kit")
            let refused = try await daemon.request("POST", "/v1/accounts/import", json: ["kit": late, "kitPassphrase": "kit", "passphrase": "p"])
            #expect(refused.status == 400, "\(ms): \(refused.object)")
        }
        #expect(try await daemon.request("GET", "/v1/status").status == 200)
        #expect(try await daemon.request("GET", "/v1/accounts/late/keys/current").status == 404)
    }

    @Test("a pairing request a hostile relay files with a time past the year 9999 is refused; enrollments and devices answer, across a restart")
    func farFutureRequest() async throws {
        let circle = try await Circle(.sqlite)
        defer { circle.remove() }
        let a = try await circle.device()
        #expect(try await a.request("POST", "/v1/accounts", json: ["user": "late", "passphrase": "a passphrase"]).status == 200)
        // The relay's own request, self-signed by keys it made, on the account's real head.
        let relay = try await circle.store.open()
        let head = try await Self.circle(on: relay, of: AccountID(validating: "late"))
        let (signing, device) = Self.relaysOwnDevice("relay's own")
        var request = try PairingRequest.make(account: head.account, device: device, signer: signing, code: "123456", headHash: head.headHash,
                                              at: Date()).request
        for at in [UInt64(1) << 63, Millis.max + 1] {
            request.requestedAt = at
            request.signature = signing.signature(for: PairingRequest.signedBytes(account: request.account, device: device, session: request.session,
                                                                                   share: request.share, headHash: request.headHash, requestedAt: at))
            try await relay.publish(batch: [.request(request)])
        }
        await relay.shutdown()
        // Both read and refused (each logged once), before anything is asked.
        try await eventually { a.logText().components(separatedBy: "refused relay record").count - 1 >= 2 }
        for _ in 0..<2 {
            let listed = try await a.request("GET", "/v1/accounts/late/enrollments")
            #expect(listed.status == 200, "\(listed.object)")
            #expect((listed.object["enrollments"] as? [Any])?.isEmpty == true, "\(listed.object)")
            #expect(try await a.request("GET", "/v1/accounts/late/devices").status == 200)
            _ = await a.stop()
            try await a.start()
            #expect(try await a.request("POST", "/v1/accounts/late/unlock", json: ["passphrase": "a passphrase"]).status == 200)
        }
    }

    /// The account's circle as the relay's own rows show it.
    static func circle(on relay: any Relay, of account: AccountID) async throws -> CircleState {
        var circle = CircleState(account: account)
        for row in try await relay.all(.log, account: account) { try circle.apply(LogEntry.decode(row.record.body)) }
        return circle
    }

    /// Keys a hostile relay makes for a device of its own, to file requests under.
    static func relaysOwnDevice(_ name: String) -> (SigningKey, DeviceKeys) {
        let signing = SigningKey.generate()
        return (signing, DeviceKeys(signing: signing.publicKey, box: BoxSecretKey.generate().publicKey, name: name))
    }
}
