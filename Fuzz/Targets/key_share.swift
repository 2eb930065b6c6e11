// Fuzz target `key_share`: key shares a relay delivers, and acknowledgements.
//
// A sealed box cannot be forged, so besides raw sealed bytes the harness seals
// the fuzzer's plaintext to fixed device 0's box key, and (mode 2) signs the
// payload with a fixed device's key first, so `KeyShare.open` and `accept` get
// past the box and the signature to the lengths, the header and PROTOCOL.md's
// rules 6 to 8. The circle accepting them: device 0 founded it, device 1 was
// approved, device 2 is a recovery kit's member, and device 1 announced
// generation 2 (key 1).
//
// Input: `u8 mode`, then by mode % 5:
//   0  sealed bytes, as the relay's `share` row holds them
//   1  plaintext (`u32be header length || header || key 32 || signature 64`), sealed by the harness
//   2  `u8 signer, u8 key (255: 32 bytes follow), u8 fix`, then the header; the harness frames,
//      signs and seals it. fix bit 0: key ID := the key's; bit 1: sender, recipient := signer, device 0
//   3  a share header alone (`KeyShare.Header.decode`)
//   4  an acknowledgement (`ShareAck.decode`), as the relay's `ack` row holds it
import Foundation
import KeyVaultCrypto
@testable import KeyVaultProtocol
import KeyVaultAccount
import FuzzSupport

let circle: CircleState = {
    var circle = CircleState(account: FuzzKeys.account)
    func append(_ body: LogEntry.Body, by signer: Int) {
        try! circle.apply(circle.nextEntry(body, signer: FuzzKeys.devices[signer].signing, signerID: FuzzKeys.deviceIDs[signer],
                                           at: Date(timeIntervalSince1970: 1_795_300_000)))
    }
    try! circle.apply(FuzzKeys.genesis())
    append(.approve(device: FuzzKeys.deviceKeys[1], requestHash: .zero), by: 0)
    append(.recovery(device: FuzzKeys.deviceKeys[2]), by: 0)
    append(.announce(generation: 2, keyID: FuzzKeys.keyIDs[1], keyCreatedAt: FuzzKeys.genesisMillis + 1000), by: 1)
    return circle
}()

func take(_ sealed: [UInt8]) {
    let me = FuzzKeys.devices[0]
    let opened = try? KeyShare.open(sealed, with: me.box) { sender in
        FuzzKeys.deviceIDs.firstIndex(of: sender).map { FuzzKeys.deviceKeys[$0].signing }
    }
    if let opened {
        precondition(KeyID(of: opened.key) == opened.header.keyID, "an opened share's key is not its key ID's")
        _ = opened.header.encoded
    }
    do {
        let share = try KeyShare.accept(sealed, with: me.box, as: FuzzKeys.deviceIDs[0], in: circle)
        precondition(opened != nil, "a share accepted that does not open")
        precondition(circle.isTrustedDevice(share.header.sender), "a share accepted from a sender that is not a trusted device")
        precondition(circle.generations.contains { $0.generation == share.header.generation && $0.keyID == share.header.keyID })
        _ = Millis.of(share.header.createdAt)
        trace("share of generation \(share.header.generation) accepted")
    } catch {
        trace("share: \(error)")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    switch input.u8() % 5 {
    case 0:
        take(input.rest())
    case 1:
        take(SealedBox.seal(SecureBytes(copying: input.rest()), to: FuzzKeys.devices[0].box.publicKey))
    case 2:
        let signer = Int(input.u8()) % FuzzKeys.devices.count, keyChoice = input.u8(), fix = input.u8()
        let key = keyChoice == 255 ? input.fixed(32) : FuzzKeys.keys[Int(keyChoice) % FuzzKeys.keys.count].bytes.withUnsafeBytes { Array($0) }
        var patches: [Int: [UInt8]] = [:]
        if fix & 1 != 0, let secret = try? SecretKey(rawRepresentation: key) { patches[3] = KeyID(of: secret).bytes }
        if fix & 2 != 0 {
            patches[5] = Array(FuzzKeys.deviceIDs[signer].hex.utf8)
            patches[6] = Array(FuzzKeys.deviceIDs[0].hex.utf8)
        }
        let header = patchingFields(input.rest(), patches)
        var plain = LabeledHash.lengthPrefix(header.count) + header + key
        plain += FuzzKeys.devices[signer].signing.signature(for: plain)
        take(SealedBox.seal(SecureBytes(copying: plain), to: FuzzKeys.devices[0].box.publicKey))
    case 3:
        do {
            let header = try KeyShare.Header.decode(input.rest())
            _ = header.encoded
            _ = Millis.of(header.createdAt)
            trace("header of generation \(header.generation)")
        } catch { trace("header: \(error)") }
    default:
        let record = input.rest()
        guard let ack = try? ShareAck.decode(record) else { break }
        precondition(ack.encoded == record, "a decoded acknowledgement encodes to other bytes")
        _ = FuzzKeys.deviceKeys.map { ack.isSigned(by: $0.signing) }
        var promotions = Promotions(deadlines: [FuzzKeys.keyIDs[1]: FuzzKeys.now])
        do {
            let effects = try promotions.acknowledged(ack, circle: circle, me: FuzzKeys.deviceIDs[1], at: FuzzKeys.now)
            trace("ack: \(effects)")
        } catch { trace("ack: \(error)") }
    }
    return 0
}
