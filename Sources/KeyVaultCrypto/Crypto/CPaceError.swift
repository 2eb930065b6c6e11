/// Why a CPace run (or one of its ristretto255 steps) was abandoned. Messages
/// name the failure, never a value: not the password, not a share, not a key.
package enum CPaceError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The peer's share is not the canonical encoding of a ristretto255
    /// element (RFC 9496 decode failed): `scalar_mult_vfy` answers `G.I`.
    case invalidElement
    /// A scalar multiplication gave the identity element, `G.I`: the peer sent
    /// the identity (draft-irtf-cfrg-cpace-21 §7.2, "MUST abort if K=G.I").
    case identityElement
    /// A message's encoding, `lv_cat(Y, AD)`, did not parse: a length past
    /// the end, a length not in its shortest form, or bytes left over.
    case malformedMessage
    /// The peer's key-confirmation tag did not match: a different password,
    /// channel or session identifier, or a message changed on the way.
    case confirmationFailed

    package var description: String {
        switch self {
        case .invalidElement: return "the peer's share is not a valid ristretto255 element"
        case .identityElement: return "the peer's share gave the identity element"
        case .malformedMessage: return "a CPace message is malformed"
        case .confirmationFailed: return "key confirmation failed (wrong pairing code, or changed messages)"
        }
    }
}
