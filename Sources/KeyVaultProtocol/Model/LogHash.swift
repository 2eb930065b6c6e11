import KeyVaultCrypto

/// A 32-byte hash of its own kind: what a log entry chains to, or what an
/// approval names. Sized once, where it is read or computed; `Kind` keeps an
/// entry's hash from standing where a request's belongs.
package struct Hash32<Kind: Hash32Kind>: Hashable, Sendable, CustomStringConvertible {
    package static var byteCount: Int { 32 }
    package let bytes: [UInt8]

    package init(bytes: some Collection<UInt8>) throws(ProtocolError) {
        guard bytes.count == Self.byteCount else { throw .malformed("\(Kind.name) is 32 bytes, not \(bytes.count)") }
        self.bytes = Array(bytes)
    }

    /// From a 32-byte hash this code computed (not from input): its size is not in doubt.
    package init(computed hash: [UInt8]) {
        precondition(hash.count == Self.byteCount, "a hash of this kind is 32 bytes")
        bytes = hash
    }

    package var hex: String { Hex.encode(bytes) }
    package var description: String { hex }
}

package protocol Hash32Kind: Sendable {
    /// How a refusal names it: "a log entry's hash".
    static var name: String { get }
}

package enum LogHashKind: Hash32Kind { package static var name: String { "a log entry's hash" } }
package enum RequestHashKind: Hash32Kind { package static var name: String { "a request hash" } }
package enum ResponseHashKind: Hash32Kind { package static var name: String { "a response hash" } }

/// What a log entry chains to: `LogEntry.hash` of the one before it, or zero for a genesis.
package typealias LogHash = Hash32<LogHashKind>
/// The hash of an enrollment or pairing request, as an approval names it.
package typealias RequestHash = Hash32<RequestHashKind>
/// The hash of a pairing response, as the confirmation names it.
package typealias ResponseHash = Hash32<ResponseHashKind>

extension Hash32 where Kind == LogHashKind {
    /// What a genesis chains to.
    package static let zero = LogHash(computed: [UInt8](repeating: 0, count: 32))
}

extension Hash32 where Kind == RequestHashKind {
    /// What an `approve` names when no request was made: a recovery kit's member re-joined the account.
    package static let zero = RequestHash(computed: [UInt8](repeating: 0, count: 32))
}

extension FieldReader {
    package mutating func hash32<Kind>(_ what: String) throws(ProtocolError) -> Hash32<Kind> {
        try Hash32<Kind>(bytes: try bytes(count: 32, what))
    }
}

extension FieldWriter {
    package mutating func hash(_ hash: Hash32<some Hash32Kind>) { bytes(hash.bytes) }
}
