// Fuzz target `log_entries`: relay log entries as a relay hands them over, and
// their application to a circle.
//
// Input: records framed `u16be length || bytes`. Each is read as
// `LogEntry.decode` (the relay's `log` row body), applied in order to one
// `CircleState` (the first entry's account), and the whole batch is then
// adopted again by `CircleSync.adopt` as a device that founded nothing.
// Signatures are not faked here: records cut from the protocol vectors verify,
// and the fuzzer mutates around them (`circle_resigned` re-signs instead).
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultAccount
import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    var entries: [LogEntry] = []
    while let record = input.record(), entries.count < 64 {
        guard let entry = try? LogEntry.decode(record) else { continue }
        // Decoding is strict: an entry has one encoding, or its hash would not name it.
        precondition(entry.encoded == record, "a decoded log entry encodes to other bytes")
        entries.append(entry)
    }
    guard let first = entries.first else { return 0 }
    var circle = CircleState(account: first.account)
    for entry in entries {
        let before = circle
        do {
            try circle.apply(entry)
        } catch {
            precondition(circle == before, "a refused entry changed the circle")
        }
    }
    exercise(circle)
    // What sync does with a batch read from the relay, on a device that holds nothing yet.
    if let outcome = try? CircleSync.adopt(entries, into: CircleState(account: first.account), confirmed: 0,
                                           me: FuzzKeys.deviceIDs[1], signer: nil) {
        precondition(outcome.circle.entries.count >= outcome.accepted.count)
        exercise(outcome.circle)
    }
    return 0
}
