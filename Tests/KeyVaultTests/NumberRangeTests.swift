import Foundation
import Testing
import KeyVault
import KeyVaultEngine
import KeyVaultPolicy
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultVault

/// Every number a record carries is checked where it enters (issue 32): the
/// generation an announce may name, times past the year 9999, and the
/// conversions of a date, which clamp rather than trap.
@Suite("Numbers from outside: checked at the edge, never a trap")
struct NumberRangeTests {
    typealias Device = MachineFixture.Device

    let account = try! AccountID(validating: "numbers")
    let a = Device(name: "a")

    func entry(_ circle: CircleState, _ body: LogEntry.Body, at date: Date = Date(timeIntervalSince1970: 1)) -> LogEntry {
        circle.nextEntry(body, signer: a.signing, signerID: a.id, at: date)
    }

    func genesis() throws -> CircleState {
        var circle = CircleState(account: account)
        try circle.apply(entry(circle, .genesis(device: a.keys, generation: 1, keyID: KeyID(of: SecretKey.generate()), keyCreatedAt: 0)))
        return circle
    }

    @Test("an announce names at most one past the highest generation: a member cannot jump to 2^31 − 1 and pin the current key")
    func announceSteps() throws {
        var circle = try genesis()
        for number in [3, Int(Int32.max)] {
            var attempt = circle
            let body = LogEntry.Body.announce(generation: Generation(number)!, keyID: KeyID(of: SecretKey.generate()), keyCreatedAt: 0)
            #expect(throws: ProtocolError.self, "\(number)") { try attempt.apply(entry(attempt, body)) }
        }
        try circle.apply(entry(circle, .announce(generation: 2, keyID: KeyID(of: SecretKey.generate()), keyCreatedAt: 0)))
        // The same number again: a device that rotated apart.
        try circle.apply(entry(circle, .announce(generation: 2, keyID: KeyID(of: SecretKey.generate()), keyCreatedAt: 0)))
        #expect(circle.latestGeneration == 2)
        #expect(Generation(Int(Int32.max))!.next == nil)
    }

    @Test("a time past the year 9999 in an entry, a share header or an ack is malformed")
    func farTimes() throws {
        let circle = try genesis()
        let good = entry(circle, .announce(generation: 2, keyID: KeyID(of: SecretKey.generate()), keyCreatedAt: 0))
        for ms in [Millis.max + 1, UInt64(1) << 63, UInt64.max] {
            var late = good
            late.createdAt = ms
            late.signature = a.signing.signature(for: late.signedBytes)
            #expect(throws: ProtocolError.self) { try LogEntry.decode(late.encoded) }
            var keyLate = good
            keyLate.body = .announce(generation: 2, keyID: KeyID(of: SecretKey.generate()), keyCreatedAt: ms)
            keyLate.signature = a.signing.signature(for: keyLate.signedBytes)
            #expect(throws: ProtocolError.self) { try LogEntry.decode(keyLate.encoded) }
        }
        var atMax = good
        atMax.createdAt = Millis.max
        atMax.signature = a.signing.signature(for: atMax.signedBytes)
        #expect(try LogEntry.decode(atMax.encoded) == atMax)
    }

    @Test("dates convert without trapping, whatever they are")
    func clampedDates() {
        for date in [Date(timeIntervalSince1970: 1e300), Date(timeIntervalSince1970: -1e300), Date(timeIntervalSince1970: .infinity),
                     Date(timeIntervalSince1970: .nan), Date.distantFuture, Date.distantPast] {
            #expect(Millis.of(date) <= Millis.max)
            #expect(RFC3339.string(from: date).count == 24)
        }
        #expect(RFC3339.string(from: Date(timeIntervalSince1970: 1e300)) == "9999-12-31T23:59:59.999Z")
    }

    @Test("kept relay records are renumbered below the start whatever cursors a relay gave them, again and again, with no overflow")
    func keptCursorsRenumbered() {
        var cursors: [RelayCursor] = [RelayCursor(Int64.min), RelayCursor(-5), RelayCursor(7), RelayCursor(Int64.max)]
        for _ in 0..<100 {
            let renumbered = Vault.renumberedBelowStart(cursors)
            #expect(cursors.map { renumbered[$0]!.value } == [-4, -3, -2, -1])
            // The next restart starts from those, plus rows a hostile relay numbered at the end of the range.
            cursors = cursors.map { renumbered[$0]! } + [RelayCursor(Int64.max)]
            cursors = Array(cursors.suffix(4))
        }
    }
}
