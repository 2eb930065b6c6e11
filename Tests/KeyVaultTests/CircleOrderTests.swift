import Foundation
import KeyVault
import KeyVaultEngine
import KeyVaultPolicy
import Testing
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultAccount
import KeyVaultVault
import KeyVaultRelay
import KeyVaultRelayClient
import KeyVaultRelayStore

/// Two devices that rotated while apart announce the same generation number;
/// whichever order their entries land in, every device agrees on the order of
/// the generations and on the current key (docs/PROTOCOL.md, "Concurrent rotations").
@Suite("Circle: concurrent announces")
struct CircleOrderTests {
    typealias Device = MachineFixture.Device

    let account = try! AccountID(validating: "order")
    let a = Device(name: "a")
    let b = Device(name: "b")

    /// Genesis by A, B approved: the log both devices start from.
    func base() throws -> CircleState {
        var circle = CircleState(account: account)
        let key = SecretKey.generate()
        try append(&circle, by: a, .genesis(device: a.keys, generation: 1, keyID: KeyID(of: key), keyCreatedAt: 0))
        try append(&circle, by: a, .approve(device: b.keys, requestHash: RequestHash(computed: [UInt8](repeating: 7, count: 32))))
        return circle
    }

    func append(_ circle: inout CircleState, by device: Device, _ body: LogEntry.Body) throws {
        let entry = LogEntry.make(account: account, seq: circle.nextSeq, previousHash: circle.headHash, signer: device.signing,
                                  signerID: device.id, body: body, at: Date(timeIntervalSince1970: 1))
        try circle.apply(entry)
    }

    @Test("both keys of generation 2 are kept, ordered by key ID, and the later one is current, whichever landed first")
    func sameNumberEitherOrder() throws {
        let keys = [KeyID([UInt8](repeating: 0x11, count: 16)), KeyID([UInt8](repeating: 0xee, count: 16))]
        var outcomes: [(order: [String], current: KeyID?)] = []
        // A's key lands first in one log, B's in the other.
        for landing in [[(a, keys[0]), (b, keys[1])], [(b, keys[1]), (a, keys[0])]] {
            var circle = try base()
            for (device, keyID) in landing {
                try append(&circle, by: device, .announce(generation: 2, keyID: keyID, keyCreatedAt: 2))
                try append(&circle, by: device, .promote(generation: 2, keyID: keyID))
            }
            outcomes.append((circle.generations.map { "\($0.generation)/\($0.keyID)" }, circle.current?.keyID))
        }
        let expected = ["2/\(keys[0])", "2/\(keys[1])"]
        for outcome in outcomes {
            #expect(Array(outcome.order.suffix(2)) == expected)
            #expect(outcome.current == keys[1])
        }
    }

    @Test("a key ID is announced once; a promote must name the number it was announced with")
    func keyIDsAreUnique() throws {
        var circle = try base()
        let keyID = KeyID([UInt8](repeating: 0x42, count: 16))
        try append(&circle, by: a, .announce(generation: 2, keyID: keyID, keyCreatedAt: 2))
        #expect(throws: ProtocolError.self) { try append(&circle, by: b, .announce(generation: 3, keyID: keyID, keyCreatedAt: 3)) }
        #expect(throws: ProtocolError.self) { try append(&circle, by: b, .promote(generation: 3, keyID: keyID)) }
        try append(&circle, by: b, .promote(generation: 2, keyID: keyID))
        #expect(throws: ProtocolError.self) { try append(&circle, by: a, .promote(generation: 2, keyID: keyID)) }
        #expect(circle.current?.keyID == keyID)
    }

    /// The lookups by hash and by key ID are indexes kept beside the log: each must say what a
    /// walk of the log says, for every entry and generation, and nothing for what is not in it.
    @Test("the head hash, an entry by its hash and a generation by its key ID agree with the log, however it was ordered")
    func indexesAgreeWithTheLog() throws {
        var circle = try base()
        // Falling key IDs: every other announce repeats the last number with a lower key ID, so it
        // goes in before the last generation rather than after it.
        let keys = (0..<40).map { KeyID([UInt8](repeating: UInt8(200 - $0), count: 16)) }
        for (index, keyID) in keys.enumerated() {
            let number = Generation(integerLiteral: 2 + index / 2)
            try append(&circle, by: index % 2 == 0 ? a : b, .announce(generation: number, keyID: keyID, keyCreatedAt: 2))
        }
        #expect(circle.generations.map(\.keyID) != [circle.generations[0].keyID] + keys, "no announce went in before the last")
        #expect(circle.headHash == circle.entries.last?.hash)
        for entry in circle.entries {
            #expect(circle.contains(hash: entry.hash))
            #expect(circle.entry(hash: entry.hash) == entry)
        }
        #expect(!circle.contains(hash: .zero) && circle.entry(hash: .zero) == nil)
        #expect(circle.entry(hash: LogHash(computed: [UInt8](repeating: 9, count: 32))) == nil)
        for announced in circle.generations {
            #expect(circle.announced(keyID: announced.keyID) == announced)
        }
        #expect(circle.announced(keyID: KeyID([UInt8](repeating: 0xfe, count: 16))) == nil)
        #expect(CircleState(account: account).headHash == .zero)
    }
}
