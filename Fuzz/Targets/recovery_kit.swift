// Fuzz target `recovery_kit`: recovery kits a local caller imports
// (docs/FORMAT.md, "Recovery kit"), header and contents.
//
// A kit's contents are authenticated under a key from Argon2id, so the harness
// seals the fuzzer's plaintext itself under a fixed passphrase at the cheapest
// cost (1 pass over 8 KiB), and `RecoveryKit.open` then parses the count, the
// records and the member from it. A kit that opens is sealed again
// (`RecoveryKit.seal`, as `keyvault export --recovery-kit` does after an import)
// and opened once more.
//
// Input: `u8 mode`, then by mode % 3:
//   0  a whole kit: `RecoveryKit.header(of:)`, then `open` if its cost is at most 2 passes over 64 KiB
//   1  `u8 version` (odd: version 2), then the plaintext, sealed by the harness with a fixed header
//   2  `u16 length`, a header of the fuzzer's, then the plaintext: sealed under the header's own
//      salt and cost when the harness can read them and they are cheap
import Foundation
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultAccount
import KeyVaultVault
import FuzzSupport

let passphrase = SecureBytes(copying: Array("correct horse battery staple".utf8))
let cheap = try! KDFParameters(opsLimit: 1, memLimitBytes: 8192)
let salt = [UInt8](repeating: 0x5a, count: KDFParameters.saltByteCount)
let kek = try! PasswordKDF.deriveKey(passphrase: passphrase, salt: salt, parameters: cheap)
let nonce = [UInt8](repeating: 0x4e, count: WrapCipher.nonceByteCount)

func header(version: Int) -> [UInt8] {
    var w = FieldWriter()
    w.string(version == 2 ? Labels.recoveryKitV2 : Labels.recoveryKit)
    w.string(FuzzKeys.account.rawValue)
    w.u64(cheap.opsLimit)
    w.u64(cheap.memLimitBytes)
    w.bytes(salt)
    return w.bytes
}

func kit(header: [UInt8], plaintext: [UInt8], key: SecretKey) -> [UInt8] {
    var w = FieldWriter()
    w.bytes(header)
    w.bytes(WrapCipher.seal(SecureBytes(copying: plaintext), key: key, aad: header, nonce: nonce))
    return w.bytes
}

/// The header's salt and cost, read here (not by the code under test), or nil.
func saltAndCost(_ header: [UInt8]) -> (salt: [UInt8], parameters: KDFParameters)? {
    var fields: [[UInt8]] = []
    var offset = 0
    while offset + 4 <= header.count, fields.count < 5 {
        let length = header[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
        guard length <= header.count - offset - 4 else { return nil }
        fields.append(Array(header[offset + 4..<offset + 4 + length]))
        offset += 4 + length
    }
    guard fields.count == 5, fields[2].count == 8, fields[3].count == 8, fields[4].count == KDFParameters.saltByteCount else { return nil }
    let ops = fields[2].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }, mem = fields[3].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    guard ops <= 2, mem <= 64 * 1024, let parameters = try? KDFParameters(opsLimit: ops, memLimitBytes: mem) else { return nil }
    return (fields[4], parameters)
}

func open(_ kit: [UInt8]) {
    let contents: RecoveryKit.Contents
    do { contents = try RecoveryKit.open(kit, passphrase: passphrase) } catch {
        trace("kit: \(error)")
        return
    }
    trace("kit: \(contents.keys.count) keys, member: \(contents.member != nil)")
    for key in contents.keys {
        precondition(KeyID(of: key.key) == key.keyID, "a kit's key is not its key ID's")
        _ = Millis.of(key.createdAt)
    }
    _ = contents.member?.deviceID
    // Exported again, as after an import: the same keys come back.
    guard let again = try? RecoveryKit.seal(account: contents.account, generations: contents.keys, member: contents.member,
                                            passphrase: passphrase, parameters: cheap),
          let reopened = try? RecoveryKit.open(again, passphrase: passphrase) else {
        preconditionFailure("a kit that opened does not seal and open again")
    }
    precondition(reopened.account == contents.account && reopened.keys.map(\.keyID) == contents.keys.map(\.keyID)
                 && reopened.keys.map(\.number) == contents.keys.map(\.number), "a kit sealed again holds other keys")
    precondition(reopened.member?.deviceID == contents.member?.deviceID, "a kit sealed again holds another member")
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    switch input.u8() % 3 {
    case 0:
        let raw = input.rest()
        guard let (account, ops, mem) = try? RecoveryKit.header(of: raw) else { break }
        _ = account.rawValue
        if ops <= 2, mem <= 64 * 1024 { open(raw) }
    case 1:
        let version = input.u8() & 1 == 1 ? 2 : 1
        open(kit(header: header(version: version), plaintext: input.rest(), key: kek))
    default:
        let head = input.bytes(input.u16())
        let plaintext = input.rest()
        if let (salt, parameters) = saltAndCost(head), let key = try? PasswordKDF.deriveKey(passphrase: passphrase, salt: salt, parameters: parameters) {
            open(kit(header: head, plaintext: plaintext, key: key))
        } else {
            // Opened (it will not authenticate) only at a cost the harness can pay: the rest of the header is parsed first.
            let sealed = kit(header: head, plaintext: plaintext, key: kek)
            if let (_, ops, mem) = try? RecoveryKit.header(of: sealed), ops <= 2, mem <= 64 * 1024 { open(sealed) }
        }
    }
    return 0
}
