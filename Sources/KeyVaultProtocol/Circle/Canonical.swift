package import FoundationEssentials
import KeyVaultCrypto

/// A time as the records write it: milliseconds since 1970, from 0 to the last
/// millisecond of the year 9999, the range every date a record, JSON or a SQL
/// column carries must fit (PROTOCOL.md, "Encoding"). A time read from outside
/// is checked against it where it enters (`FieldReader.millis`); a date written
/// is clamped into it, so no conversion of a time can trap.
package enum Millis {
    package static let max: UInt64 = 253_402_300_799_999

    /// `date` in milliseconds, rounded down (or to the nearest, for a date that was read
    /// from milliseconds), clamped into range: a clock before 1970 writes 0.
    package static func of(_ date: Date, rounding rule: FloatingPointRoundingRule = .down) -> UInt64 {
        let ms = (date.timeIntervalSince1970 * 1000).rounded(rule)
        guard ms.isFinite, ms > 0 else { return 0 }
        return ms >= Double(max) ? max : UInt64(ms)
    }

    /// The date of a time in range.
    package static func date(_ ms: UInt64) -> Date { Date(timeIntervalSince1970: Double(Swift.min(ms, max)) / 1000) }

    /// `date` to the whole millisecond (down), as records carry it: a time made so reads back the
    /// same from the vault, the log and a share.
    package static func whole(_ date: Date) -> Date { Self.date(of(date)) }
}

/// The canonical encoding every signed record uses (docs/PROTOCOL.md,
/// "Encoding"): a sequence of fields, each `u32be length || bytes`.
/// Integers are 8-byte big-endian fields; strings are UTF-8. Decoding is
/// strict: a record with a missing, extra or wrongly sized field is refused.
package struct FieldWriter {
    package private(set) var bytes: [UInt8] = []

    package init() {}

    package mutating func bytes(_ value: [UInt8]) {
        bytes += LabeledHash.lengthPrefix(value.count)
        bytes += value
    }

    package mutating func string(_ value: String) { bytes(Array(value.utf8)) }

    package mutating func generation(_ generation: Generation) { u64(UInt64(generation.value)) }

    package mutating func u64(_ value: UInt64) {
        var out: [UInt8] = []
        for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8((value >> UInt64(shift)) & 0xff)) }
        bytes(out)
    }
}

package struct FieldReader {
    private let data: [UInt8]
    private var offset = 0

    package init(_ data: [UInt8]) { self.data = data }

    package mutating func bytes() throws(ProtocolError) -> [UInt8] {
        guard offset + 4 <= data.count else { throw .malformed("a field is cut short") }
        let length = data[offset..<offset + 4].reduce(0) { Int($0) << 8 | Int($1) }
        offset += 4
        guard length <= data.count - offset else { throw .malformed("a field runs past the end") }
        defer { offset += length }
        return Array(data[offset..<offset + length])
    }

    package mutating func bytes(count: Int, _ what: String) throws(ProtocolError) -> [UInt8] {
        let value = try bytes()
        guard value.count == count else { throw .malformed("\(what) must be \(count) bytes") }
        return value
    }

    package mutating func string() throws(ProtocolError) -> String {
        guard let text = String(validating: try bytes(), as: UTF8.self) else { throw .malformed("a text field is not UTF-8") }
        return text
    }

    package mutating func u64() throws(ProtocolError) -> UInt64 {
        try bytes(count: 8, "an integer").reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// A generation number: an 8-byte integer from 1 to 2^31 − 1 (anything
    /// larger is refused here, before it could overflow an `Int`).
    package mutating func generation() throws(ProtocolError) -> Generation {
        guard let generation = Generation(try u64()) else { throw .malformed("a generation number out of range") }
        return generation
    }

    /// A device ID as the records write it: 32 lowercase hex characters.
    package mutating func deviceID() throws(ProtocolError) -> DeviceID {
        guard let id = DeviceID(hex: try string()) else { throw .malformed("a device ID is 32 lowercase hex characters") }
        return id
    }

    /// A key ID as the records write it: 16 bytes.
    package mutating func keyID() throws(ProtocolError) -> KeyID {
        try KeyID(reading: try bytes(count: 16, "a key ID"))
    }

    package mutating func label(_ expected: String) throws(ProtocolError) {
        guard try string() == expected else { throw .malformed("not a \(expected) record") }
    }

    /// A time (`Millis`): refused as `malformed` outside 0 … `Millis.max`.
    package mutating func millis() throws(ProtocolError) -> UInt64 {
        let value = try u64()
        guard value <= Millis.max else { throw .malformed("a time past the year 9999") }
        return value
    }

    package func finish() throws(ProtocolError) {
        guard offset == data.count else { throw .malformed("trailing bytes after the record") }
    }
}

/// Every signed record travels as `field(signed bytes) || field(64-byte signature)`.
package enum SignedEnvelope {
    package static func encode(_ signed: [UInt8], _ signature: [UInt8]) -> [UInt8] {
        var w = FieldWriter()
        w.bytes(signed)
        w.bytes(signature)
        return w.bytes
    }

    package static func decode(_ data: [UInt8]) throws(ProtocolError) -> (signed: [UInt8], signature: [UInt8]) {
        var outer = FieldReader(data)
        let signed = try outer.bytes()
        let signature = try outer.bytes(count: 64, "a signature")
        try outer.finish()
        return (signed, signature)
    }
}

extension SignedEnvelope {
    /// A signed record's first field, its label, without checking anything else:
    /// which kind of record a relay row of a shared kind holds.
    package static func label(of data: [UInt8]) -> String? {
        guard let (signed, _) = try? decode(data) else { return nil }
        var r = FieldReader(signed)
        return try? r.string()
    }

    /// The request hash that an enrollment record labelled one of `labels` names (its
    /// third field, after the label and the account), without checking anything else:
    /// to find the request a challenge, reveal, response, confirmation or approval is for.
    package static func requestHash(of data: [UInt8], labels: Set<String>) -> RequestHash? {
        guard let (signed, _) = try? decode(data) else { return nil }
        var r = FieldReader(signed)
        guard let label = try? r.string(), labels.contains(label), (try? r.string()) != nil else { return nil }
        return try? r.hash32("a request hash") as RequestHash
    }
}

/// Why a record from the relay was refused. The relay is untrusted: each of
/// these is logged and the record is ignored.
package enum ProtocolError: Error, Sendable, Equatable, CustomStringConvertible {
    case malformed(String)
    case badSignature(String)
    case untrustedSigner(DeviceID)
    case fork(seq: LogSeq)
    case gap(expected: LogSeq, got: LogSeq)
    case rollback(seq: LogSeq)
    case invalid(String)

    package var description: String {
        switch self {
        case .malformed(let why): return "malformed record: \(why)"
        case .badSignature(let what): return "bad signature on \(what)"
        case .untrustedSigner(let who): return "signed by a device the circle does not trust: \(who)"
        case .fork(let seq): return "fork: a different entry \(seq) than the one already verified"
        case .gap(let expected, let got): return "gap: expected entry \(expected), got \(got)"
        case .rollback(let seq): return "rollback to entry \(seq)"
        case .invalid(let why): return "invalid: \(why)"
        }
    }
}
