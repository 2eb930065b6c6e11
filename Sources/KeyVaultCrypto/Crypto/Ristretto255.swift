internal import CSodium

/// The ristretto255 group (RFC 9496) over libsodium's `crypto_core_ristretto255_*`
/// and `crypto_scalarmult_ristretto255`: the group of the CPace suite
/// CPACE-RISTR255-SHA512. Public elements are checked when decoded, secret
/// elements and scalars live in secure memory, and a scalar multiplication
/// whose result is the identity element throws.
package enum Ristretto255 {
    /// An encoded element (`crypto_core_ristretto255_BYTES`).
    package static let elementByteCount = 32
    /// A reduced scalar (`crypto_core_ristretto255_SCALARBYTES`).
    package static let scalarByteCount = 32
    /// The uniform input of the element derivation (`crypto_core_ristretto255_HASHBYTES`).
    package static let uniformByteCount = 64
    /// The widest input `Scalar(reducing:)` takes (`crypto_core_ristretto255_NONREDUCEDSCALARBYTES`).
    package static let wideScalarByteCount = 64

    /// A public element in its canonical 32-byte encoding: a peer's share.
    package struct Element: Sendable, Hashable {
        package let rawRepresentation: [UInt8]

        /// RFC 9496 decode: throws `CPaceError.invalidElement` unless `raw` is
        /// the canonical 32-byte encoding of an element. The identity element
        /// decodes (its encoding is all zeros); a scalar multiplication by it
        /// throws `CPaceError.identityElement`.
        package init(rawRepresentation raw: [UInt8]) throws {
            Sodium.ensureReady()
            // RFC 9496 §4.3.1 refuses any value >= p, so any with bit 255 set;
            // libsodium 1.0.18's canonicity check masks that bit and lets such
            // an encoding through (later releases refuse it), so it is checked here.
            guard raw.count == Ristretto255.elementByteCount, raw[31] & 0x80 == 0,
                  crypto_core_ristretto255_is_valid_point(raw) == 1 else { throw CPaceError.invalidElement }
            self.rawRepresentation = raw
        }

        /// An encoding libsodium has just produced, valid by construction.
        fileprivate init(produced raw: [UInt8]) {
            self.rawRepresentation = raw
        }
    }

    /// A secret element, encoded, in secure memory: a generator derived from a
    /// password, or a Diffie-Hellman result.
    package struct SecretElement: Sendable {
        package let bytes: SecureBytes

        /// The element derivation of RFC 9496 §4.3.4 (`crypto_core_ristretto255_from_hash`)
        /// from 64 uniform bytes.
        package init(fromUniform uniform: SecureBytes) {
            precondition(uniform.count == Ristretto255.uniformByteCount, "ristretto255 element derivation takes 64 bytes")
            Sodium.ensureReady()
            bytes = SecureBytes(capacity: Ristretto255.elementByteCount) { out in
                uniform.withUnsafeBytes { u in
                    _ = crypto_core_ristretto255_from_hash(out.bindMemory(to: UInt8.self).baseAddress!,
                                                           u.bindMemory(to: UInt8.self).baseAddress!)
                }
                return Ristretto255.elementByteCount
            }
        }

        fileprivate init(produced bytes: SecureBytes) {
            self.bytes = bytes
        }
    }

    /// A secret scalar, reduced modulo the group order and never zero, in secure memory.
    package struct Scalar: Sendable {
        package let bytes: SecureBytes

        /// A scalar uniform in 1 ..< group order (`crypto_core_ristretto255_scalar_random`).
        package static func random() -> Scalar {
            Sodium.ensureReady()
            return Scalar(bytes: SecureBytes(capacity: Ristretto255.scalarByteCount) { out in
                crypto_core_ristretto255_scalar_random(out.bindMemory(to: UInt8.self).baseAddress!)
                return Ristretto255.scalarByteCount
            })
        }

        /// A little-endian integer of up to 64 bytes, reduced modulo the group
        /// order (`crypto_core_ristretto255_scalar_reduce`). A result of zero
        /// is refused: it would make every product the identity.
        package init(reducing littleEndian: SecureBytes) {
            precondition(littleEndian.count <= Ristretto255.wideScalarByteCount, "a scalar to reduce is at most 64 bytes")
            Sodium.ensureReady()
            let reduced = SecureBytes(capacity: Ristretto255.scalarByteCount) { out in
                // Zero-extended to the 64 bytes the reduction reads, in secure memory.
                let wide = SecureBytes(capacity: Ristretto255.wideScalarByteCount) { w in
                    w.initializeMemory(as: UInt8.self, repeating: 0)
                    littleEndian.withUnsafeBytes { w.copyMemory(from: $0) }
                    return Ristretto255.wideScalarByteCount
                }
                wide.withUnsafeBytes { w in
                    crypto_core_ristretto255_scalar_reduce(out.bindMemory(to: UInt8.self).baseAddress!,
                                                           w.bindMemory(to: UInt8.self).baseAddress!)
                }
                return Ristretto255.scalarByteCount
            }
            let isZero = reduced.withUnsafeBytes { sodium_is_zero($0.bindMemory(to: UInt8.self).baseAddress!, $0.count) == 1 }
            precondition(!isZero, "a ristretto255 scalar reduced to zero")
            self.bytes = reduced
        }

        private init(bytes: SecureBytes) {
            self.bytes = bytes
        }

        /// `scalar_mult(y, g)` of the CPace draft: this scalar times a secret
        /// generator, encoded. Throws `identityElement` if the product is the
        /// identity (the generator was the identity).
        package func multiply(_ element: SecretElement) throws -> Element {
            var out = [UInt8](repeating: 0, count: Ristretto255.elementByteCount)
            let rc = bytes.withUnsafeBytes { n in
                element.bytes.withUnsafeBytes { p in
                    crypto_scalarmult_ristretto255(&out, n.bindMemory(to: UInt8.self).baseAddress!,
                                                   p.bindMemory(to: UInt8.self).baseAddress!)
                }
            }
            guard rc == 0 else { throw CPaceError.identityElement }
            return Element(produced: out)
        }

        /// This scalar times a decoded public element, into secure memory.
        /// libsodium answers -1, and this throws `identityElement`, when the
        /// product is the identity; the group has prime order and the scalar is
        /// not zero, so that happens exactly when `element` is the identity.
        package func multiply(_ element: Element) throws -> SecretElement {
            var rc: Int32 = -1
            let product = SecureBytes(capacity: Ristretto255.elementByteCount) { out in
                rc = bytes.withUnsafeBytes { n in
                    crypto_scalarmult_ristretto255(out.bindMemory(to: UInt8.self).baseAddress!,
                                                   n.bindMemory(to: UInt8.self).baseAddress!, element.rawRepresentation)
                }
                return Ristretto255.elementByteCount
            }
            guard rc == 0 else { throw CPaceError.identityElement }
            return SecretElement(produced: product)
        }
    }
}
