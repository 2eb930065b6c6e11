// Fuzz target `circle_resigned`: the transitions an enrolled device (or a relay
// replaying its records) can drive in a circle, past the signature checks.
//
// The harness founds a circle with a valid genesis signed by fixed device 0
// (this device). The fuzzer then writes the *signed bytes* of later records, and
// the harness signs them with the fixed key it names, so every body reaches
// `CircleState.apply` and the checks after the signature. A flag byte per
// record lets the harness fill in what the fuzzer cannot compute: the next
// sequence number, the head's hash, the signer's device ID, a share's key ID.
//
// Input: `u8 flags` (bit 0: the genesis times follow as two u64), then ops:
//   `u8 op` — op & 3:
//   0  log entry: `u8 signer, u8 fix, u16 length, signed bytes`; op & 4 sends it
//      to the relay's side (adopted at the end by `CircleSync.adopt`, which
//      rebases this device's own entries it collides with), else it is applied
//      here. fix bit 0: seq := next; bit 1: previous hash := head; bit 2: signer
//      field := that device's ID.
//   1  acknowledgement: `u8 signer, u8 fix, u16 length, signed bytes` →
//      `ShareAck.decode` → `Promotions.acknowledged`. fix bit 2: device field := signer.
//   2  key share to device 0: `u8 signer, u8 key, u8 fix, u16 length, header` →
//      payload `u32be(length) || header || key`, signed, sealed to device 0 →
//      `KeyShare.accept`. fix bit 0: key ID := the key's; bit 1: sender,
//      recipient := signer, device 0.
//   3  promotion timers: `u8 what, u64 ms` (announce a deadline for a key this
//      circle announced, a deadline passing, a promotion seen, what is due).
import Foundation
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultAccount
import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let flags = input.u8()
    let genesis = flags & 1 == 1 ? FuzzKeys.genesis(createdAt: input.u64(), keyCreatedAt: input.u64()) : FuzzKeys.genesis()
    var local = CircleState(account: FuzzKeys.account)
    do { try local.apply(genesis) } catch { return 0 }
    var relay = local
    var relayBatch: [LogEntry] = []
    var promotions = Promotions()
    let me = FuzzKeys.deviceIDs[0]
    var steps = 0

    while !input.isEmpty, steps < 48 {
        steps += 1
        let op = input.u8()
        switch op & 3 {
        case 0:
            let signer = input.u8(), fix = input.u8()
            let toRelay = op & 4 != 0
            let view = toRelay ? relay : local
            var patches: [Int: [UInt8]] = [:]
            if fix & 1 != 0 { patches[2] = u64be(view.nextSeq.value) }
            if fix & 2 != 0 { patches[3] = view.headHash.bytes }
            if fix & 4 != 0 { patches[4] = Array(FuzzKeys.deviceIDs[Int(signer) % 4].hex.utf8) }
            let signed = patchingFields(input.bytes(input.u16()), patches)
            let entry: LogEntry
            do { entry = try LogEntry.decode(resigned(signed, by: signer)) } catch { trace("entry: \(error)"); continue }
            if toRelay {
                // The relay's log: what another device appended while this one queued its own.
                do {
                    try relay.apply(entry)
                    relayBatch.append(entry)
                    trace("relay's entry \(entry.seq) \(entry.body.kind)")
                } catch { trace("relay's entry: \(error)") }
            } else {
                let before = local
                do {
                    try local.apply(entry)
                    trace("entry \(entry.seq) \(entry.body.kind)")
                } catch {
                    trace("entry: \(error)")
                    precondition(local == before, "a refused entry changed the circle")
                }
                if case .promote(_, let keyID) = entry.body, local != before { _ = promotions.promoted(keyID: keyID) }
                if case .destroy = entry.body, local != before { promotions.shredded() }
            }
        case 1:
            let signer = input.u8(), fix = input.u8()
            var patches: [Int: [UInt8]] = [:]
            if fix & 4 != 0 { patches[4] = Array(FuzzKeys.deviceIDs[Int(signer) % 4].hex.utf8) }
            let signed = patchingFields(input.bytes(input.u16()), patches)
            do {
                let ack = try ShareAck.decode(resigned(signed, by: signer))
                let effects = try promotions.acknowledged(ack, circle: local, me: me, at: FuzzKeys.now)
                trace("ack: \(effects)")
            } catch { trace("ack: \(error)") }
        case 2:
            let signer = Int(input.u8()) % 4, keyIndex = Int(input.u8()) % FuzzKeys.keys.count, fix = input.u8()
            let key = FuzzKeys.keys[keyIndex]
            var patches: [Int: [UInt8]] = [:]
            if fix & 1 != 0 { patches[3] = FuzzKeys.keyIDs[keyIndex].bytes }
            if fix & 2 != 0 {
                patches[5] = Array(FuzzKeys.deviceIDs[signer].hex.utf8)
                patches[6] = Array(me.hex.utf8)
            }
            let header = patchingFields(input.bytes(input.u16()), patches)
            var plain = LabeledHash.lengthPrefix(header.count) + header
            key.bytes.withUnsafeBytes { plain += $0 }
            plain += FuzzKeys.devices[signer].signing.signature(for: plain)
            let sealed = SealedBox.seal(SecureBytes(copying: plain), to: FuzzKeys.devices[0].box.publicKey)
            do {
                let share = try KeyShare.accept(sealed, with: FuzzKeys.devices[0].box, as: me, in: local)
                precondition(KeyID(of: share.key) == share.header.keyID, "an accepted share's key is not its key ID's")
                _ = Millis.of(share.header.createdAt)
                trace("share of generation \(share.header.generation) accepted")
            } catch { trace("share: \(error)") }
        default:
            let what = input.u8()
            let at = Millis.date(input.u64())
            let announced = local.generations
            let pick = announced.isEmpty ? nil : announced[Int(what >> 2) % announced.count].keyID
            switch (what & 3, pick) {
            case (0, let keyID?): trace("announced: \(promotions.announced(keyID: keyID, deadline: at))")
            case (1, let keyID?): trace("deadline: \(promotions.deadlinePassed(keyID: keyID, circle: local))")
            case (2, _): trace("resumed: \(promotions.resumed(circle: local, me: me, at: at))")
            default: trace("due: \(promotions.due(circle: local, me: me, at: at))")
            }
        }
    }
    exercise(local)
    _ = promotions.due(circle: local, me: me, at: FuzzKeys.now)
    // The relay's entries reach this device: its own entries past the genesis are rebased on theirs.
    if !relayBatch.isEmpty, let outcome = try? CircleSync.adopt(relayBatch, into: local, confirmed: 1, me: me,
                                                                 signer: FuzzKeys.devices[0].signing) {
        trace("adopted \(outcome.accepted.count), rewritten from \(String(describing: outcome.rewrittenFrom)), dropped \(outcome.dropped.count)")
        exercise(outcome.circle)
    }
    return 0
}
