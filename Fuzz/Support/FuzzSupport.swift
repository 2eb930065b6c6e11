// What every fuzz target shares (Fuzz/README.md): a reader that takes the
// fuzzer's bytes as numbers and fields (never failing: past the end it reads
// zeros), the fixed identities and keys the harnesses sign and seal with, and
// the read-only questions the daemon asks a circle after every change.
package import Foundation
package import KeyVaultCrypto
package import KeyVaultProtocol
// The memberwise initializers (to sign records with chosen times) are internal.
@testable import KeyVaultProtocol
package import KeyVaultAccount

/// The fuzzer's bytes, read front to back.
package struct FuzzInput {
    package let bytes: [UInt8]
    package private(set) var offset = 0

    package init(_ data: UnsafePointer<UInt8>, _ size: Int) { bytes = Array(UnsafeBufferPointer(start: data, count: size)) }
    package init(_ bytes: [UInt8]) { self.bytes = bytes }

    package var isEmpty: Bool { offset >= bytes.count }
    package var remaining: Int { max(0, bytes.count - offset) }

    package mutating func u8() -> UInt8 {
        guard offset < bytes.count else { return 0 }
        defer { offset += 1 }
        return bytes[offset]
    }

    package mutating func bool() -> Bool { u8() & 1 == 1 }

    package mutating func u16() -> Int { Int(u8()) << 8 | Int(u8()) }

    package mutating func u32() -> UInt32 { (0..<4).reduce(UInt32(0)) { acc, _ in acc << 8 | UInt32(u8()) } }

    package mutating func u64() -> UInt64 { (0..<8).reduce(UInt64(0)) { acc, _ in acc << 8 | UInt64(u8()) } }

    /// Up to `count` bytes (fewer at the end).
    package mutating func bytes(_ count: Int) -> [UInt8] {
        let n = min(max(0, count), remaining)
        defer { offset += n }
        return Array(bytes[offset..<offset + n])
    }

    /// Exactly `count` bytes, zero-padded past the end.
    package mutating func fixed(_ count: Int) -> [UInt8] {
        var out = bytes(count)
        out += [UInt8](repeating: 0, count: count - out.count)
        return out
    }

    /// A record framed as `u16be length || bytes` (the harnesses' framing, not the protocol's).
    package mutating func record() -> [UInt8]? {
        guard !isEmpty else { return nil }
        return bytes(u16())
    }

    /// Everything left.
    package mutating func rest() -> [UInt8] { bytes(remaining) }
}

/// Frames records the way `FuzzInput.record()` reads them (for seed corpora).
package func framed(_ record: [UInt8]) -> [UInt8] {
    precondition(record.count <= 0xffff)
    return [UInt8(record.count >> 8), UInt8(record.count & 0xff)] + record
}

package func u64be(_ value: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: value >> UInt64(56 - 8 * $0)) } }

/// The fixed identities. Devices 0 to 2 are the protocol vectors' laptop, phone
/// and tablet (Tests/KeyVaultTests/vectors/protocol.json), so records cut from
/// the vectors verify under them and seeds made from the vectors go deep.
package enum FuzzKeys {
    package static let names = ["laptop", "phone", "tablet", "watch"]
    private static let seeds: [(UInt8, UInt8)] = [(0x01, 0x03), (0x02, 0x04), (0x05, 0x06), (0x07, 0x08)]

    package static let devices: [DeviceIdentity] = seeds.map { signing, box in
        DeviceIdentity(signing: try! SigningKey(seed: SecureBytes(copying: [UInt8](repeating: signing, count: 32))),
                       box: try! BoxSecretKey(secret: SecureBytes(copying: [UInt8](repeating: box, count: 32))))
    }

    package static let deviceKeys: [DeviceKeys] = zip(devices, names).map { identity, name in
        DeviceKeys(signing: identity.signing.publicKey, box: identity.box.publicKey, name: name)
    }

    package static let deviceIDs: [DeviceID] = deviceKeys.map(\.deviceID)

    /// Generation keys: the vectors' key (0x20 … 0x3f), then three more.
    package static let keys: [SecretKey] = (0..<4).map { i in
        try! SecretKey(rawRepresentation: (0..<32).map { UInt8(0x20 + 0x20 * i + $0) & 0xff })
    }

    package static let keyIDs: [KeyID] = keys.map { KeyID(of: $0) }

    package static let account = try! AccountID(validating: "alice")

    /// The vectors' genesis time, 2026-11-21 (ms).
    package static let genesisMillis: UInt64 = 1_795_300_000_000

    /// A clock for machines that ask for one.
    package static let now = Date(timeIntervalSince1970: Double(genesisMillis) / 1000 + 600)

    /// A valid genesis by device 0: generation 1, key 0.
    package static func genesis(createdAt: UInt64 = genesisMillis, keyCreatedAt: UInt64 = genesisMillis) -> LogEntry {
        var entry = LogEntry(account: account, seq: .genesis, previousHash: .zero, signer: deviceIDs[0], createdAt: createdAt,
                             body: .genesis(device: deviceKeys[0], generation: 1, keyID: keyIDs[0], keyCreatedAt: keyCreatedAt),
                             signature: [])
        entry.signature = devices[0].signing.signature(for: entry.signedBytes)
        return entry
    }

    /// A circle of devices 0 and 1 (approved by 0), founded on key 0.
    package static let circle: CircleState = {
        var circle = CircleState(account: account)
        try! circle.apply(genesis())
        var approve = LogEntry(account: account, seq: 1, previousHash: circle.headHash, signer: deviceIDs[0], createdAt: genesisMillis + 1,
                               body: .approve(device: deviceKeys[1], requestHash: .zero), signature: [])
        approve.signature = devices[0].signing.signature(for: approve.signedBytes)
        try! circle.apply(approve)
        return circle
    }()

    /// The signing key of a fixed device, by its public key (nil: not one of ours).
    package static func signer(for key: SigningPublicKey) -> SigningKey? {
        devices.first { $0.signing.publicKey == key }?.signing
    }
}

/// The read-only questions the daemon asks a circle it holds (status, devices,
/// key reads, the work a revoke owes): each must answer, whatever the log holds.
package func exercise(_ circle: CircleState) {
    _ = circle.current
    _ = circle.currentGeneration
    _ = circle.latestGeneration
    _ = circle.headHash
    _ = circle.nextSeq
    _ = circle.trustedDevices.count
    _ = circle.shareRecipients.count
    for (id, member) in circle.members {
        _ = circle.revokeDebt(signedBy: id)
        _ = circle.approval(of: id)
        _ = circle.isTrustedDevice(id)
        _ = member.keys.deviceID
    }
    for announced in circle.generations {
        _ = circle.announced(announced.generation)
        _ = circle.isPromoted(keyID: announced.keyID)
        _ = Millis.of(announced.createdAt)
    }
    for entry in circle.entries.suffix(2) { _ = circle.contains(hash: entry.hash) }
    // A state is the verified replay of its own entries.
    if let replayed = try? circle.prefix(circle.entries.count) {
        precondition(replayed == circle, "replaying a circle's own entries gives another state")
    } else {
        preconditionFailure("a circle's own entries do not verify again")
    }
}

/// Signed bytes wrapped as a record (`field(signed) || field(signature)`) with the
/// signature of fixed device `index` (mod the number of devices), or 64 zero bytes
/// when `index` is 255: the record verifies only if it names that device as its signer.
package func resigned(_ signed: [UInt8], by index: UInt8) -> [UInt8] {
    let signature = index == 255 ? [UInt8](repeating: 0, count: 64)
        : FuzzKeys.devices[Int(index) % FuzzKeys.devices.count].signing.signature(for: signed)
    return SignedEnvelope.encode(signed, signature)
}

/// `bytes` read as a sequence of protocol fields (`u32be length || bytes`), with
/// field `i` replaced by `replacements[i]` where it exists; whatever does not
/// parse as a field is kept as it is. The harnesses use it to put what the
/// fuzzer cannot compute (a hash, the next number, a signer's ID) into a record
/// whose other fields the fuzzer chose.
package func patchingFields(_ bytes: [UInt8], _ replacements: [Int: [UInt8]]) -> [UInt8] {
    guard !replacements.isEmpty else { return bytes }
    var out: [UInt8] = []
    var offset = 0
    var index = 0
    while offset + 4 <= bytes.count {
        let length = bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
        guard length <= bytes.count - offset - 4 else { break }
        let field = Array(bytes[offset + 4..<offset + 4 + length])
        let value = replacements[index] ?? field
        out += LabeledHash.lengthPrefix(value.count) + value
        offset += 4 + length
        index += 1
    }
    return out + bytes[offset...]
}

/// `FUZZ_DEBUG=1` in the environment: the harnesses say what each step of an
/// input did (to check that a seed goes where it is meant to).
package let fuzzDebug = ProcessInfo.processInfo.environment["FUZZ_DEBUG"] != nil

package func trace(_ message: @autoclosure () -> String) {
    if fuzzDebug { print("fuzz: " + message()) }
}
