/// CPace, a balanced password-authenticated key exchange, as specified by
/// draft-irtf-cfrg-cpace-21 (23 April 2026), for the one cipher suite
/// CPACE-RISTR255-SHA512 (§5, §8.3: the group ristretto255 of RFC 9496 with
/// H = SHA-512), in the initiator-responder setting (`transcript_ir`, §6.3),
/// followed by explicit key confirmation in both directions (§10.4).
///
/// The run, for a pairing where one device speaks first:
///
///     initiator A                                   responder B
///     Initiator(inputs:associatedData:)
///                   ---- message: Ya, ADa ---->
///                                                   Responder(respondingTo:inputs:associatedData:)
///                   <--- response: Yb, ADb, Tb ---
///     finish(response): checks Tb
///                   ---- confirmation: Ta ----->
///                                                   finish(Ta): checks Ta
///     ISK                                           ISK
///
/// Each side's state is non-copyable and consumed by `finish`, so a run
/// advances once and a failed confirmation ends it: one password guess per
/// run. A side holds the session key only after the peer's tag has verified.
///
/// The functions below are the draft's, named as it names them, so that its
/// test vectors (Appendix A and B.3) can be checked one by one.
package enum CPace {
    /// The cipher suite, named as §5 names it.
    package static let suite = "CPACE-RISTR255-SHA512"
    /// The specification this implementation and its test vectors follow.
    package static let specification = "draft-irtf-cfrg-cpace-21"

    /// `G.DSI` of G_Ristretto255 (§8.3).
    package static let domainSeparator: [UInt8] = Array("CPaceRistretto255".utf8)
    /// `G.DSI || b"_ISK"`, the first field of the ISK hash (§7.2).
    package static let iskLabel: [UInt8] = domainSeparator + Array("_ISK".utf8)
    /// The prefix of the key-confirmation MAC key (§10.4).
    package static let macKeyLabel: [UInt8] = Array("CPaceMac".utf8)
    /// The prefix of the optional session-identifier output (§10.6).
    package static let sessionIDOutputLabel: [UInt8] = Array("CPaceSidOutput".utf8)

    /// ISK is `H.hash(…)` at its default length, `H.b_in_bytes` = 64 for SHA-512.
    package static let sessionKeyByteCount = SHA512.byteCount
    /// A key-confirmation tag is one HMAC-SHA-512 output.
    package static let confirmationTagByteCount = HMACSHA512.byteCount
}

// MARK: - String utilities (Appendix A.1, A.3)

extension CPace {
    /// The LEB128 encoding of a length (Appendix A.1.1).
    package static func leb128(_ length: Int) -> [UInt8] {
        precondition(length >= 0)
        var rest = UInt(length)
        var out: [UInt8] = []
        repeat {
            let low = UInt8(rest & 0x7f)
            rest >>= 7
            out.append(rest == 0 ? low : low | 0x80)
        } while rest != 0
        return out
    }

    /// `prepend_len(data)`: the LEB128 length, then the bytes (Appendix A.1.1).
    package static func prependLen(_ data: [UInt8]) -> [UInt8] {
        leb128(data.count) + data
    }

    /// `lv_cat(a0, a1, …)`: each part with its length prepended (Appendix A.1.3).
    package static func lvCat(_ parts: [UInt8]...) -> [UInt8] {
        lvCat(parts)
    }

    package static func lvCat(_ parts: [[UInt8]]) -> [UInt8] {
        parts.flatMap(prependLen)
    }

    /// Splits `lv_cat(a0, …, a(n-1))` back into its `n` parts: every length
    /// in its shortest LEB128 form, no part past the end, nothing left over.
    package static func lvSplit(_ bytes: [UInt8], count: Int) -> [[UInt8]]? {
        var parts: [[UInt8]] = []
        var offset = 0
        for _ in 0..<count {
            var length = 0
            var shift = 0
            while true {
                // Four LEB128 bytes (2^28) is far past any message here.
                guard offset < bytes.count, shift < 28 else { return nil }
                let byte = bytes[offset]
                offset += 1
                length |= Int(byte & 0x7f) << shift
                if byte & 0x80 == 0 {
                    // A final zero group after the first byte is not the shortest form.
                    guard byte != 0 || shift == 0 else { return nil }
                    break
                }
                shift += 7
            }
            guard bytes.count - offset >= length else { return nil }
            parts.append(Array(bytes[offset..<offset + length]))
            offset += length
        }
        return offset == bytes.count ? parts : nil
    }

    /// Lexicographic order of octet strings (Appendix A.3.1).
    package static func lexicographicallyLarger(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        for (x, y) in zip(a, b) where x != y {
            return x > y
        }
        return a.count > b.count
    }

    /// `o_cat(a, b)`: b"oc", then the larger string, then the other (Appendix A.3.2).
    package static func oCat(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        Array("oc".utf8) + (lexicographicallyLarger(a, b) ? a + b : b + a)
    }

    /// The two transcript functions of §6.3. This implementation runs
    /// initiator-responder; the ordered concatenation is here for the draft's
    /// vectors and for a symmetric use that would need it.
    package enum Transcript {
        /// `transcript_ir(Ya, ADa, Yb, ADb) = lv_cat(Ya, ADa) || lv_cat(Yb, ADb)` (Appendix A.3.4).
        case initiatorResponder
        /// `transcript_oc(Ya, ADa, Yb, ADb) = o_cat(lv_cat(Ya, ADa), lv_cat(Yb, ADb))` (Appendix A.3.6).
        case orderedConcatenation

        package func of(_ ya: [UInt8], _ ada: [UInt8], _ yb: [UInt8], _ adb: [UInt8]) -> [UInt8] {
            switch self {
            case .initiatorResponder: return CPace.lvCat(ya, ada) + CPace.lvCat(yb, adb)
            case .orderedConcatenation: return CPace.oCat(CPace.lvCat(ya, ada), CPace.lvCat(yb, adb))
            }
        }
    }
}

// MARK: - The group operations of G_Ristretto255 with H = SHA-512 (§8.1, §8.3)

extension CPace {
    /// `generator_string(G.DSI, PRS, CI, sid, H.s_in_bytes)` (§8.1, Appendix A.2):
    /// `lv_cat(DSI, PRS, zero_bytes(len_zpad), CI, sid)`, built in secure
    /// memory because it holds the password.
    package static func generatorString(password: SecureBytes, channelID: [UInt8], sessionID: [UInt8]) -> SecureBytes {
        let dsiField = prependLen(domainSeparator)
        let passwordLength = leb128(password.count)
        let zeroPadding = max(0, SHA512.blockByteCount - 1 - (passwordLength.count + password.count) - dsiField.count)
        let tail = prependLen([UInt8](repeating: 0, count: zeroPadding)) + prependLen(channelID) + prependLen(sessionID)
        let total = dsiField.count + passwordLength.count + password.count + tail.count
        return SecureBytes(capacity: total) { out in
            var offset = 0
            func append(_ bytes: UnsafeRawBufferPointer) {
                UnsafeMutableRawBufferPointer(rebasing: out[offset..<offset + bytes.count]).copyMemory(from: bytes)
                offset += bytes.count
            }
            dsiField.withUnsafeBytes(append)
            passwordLength.withUnsafeBytes(append)
            password.withUnsafeBytes(append)
            tail.withUnsafeBytes(append)
            return offset
        }
    }

    /// `G.calculate_generator(H, PRS, CI, sid)` (§8.3): the generator string
    /// hashed to 64 bytes, then the ristretto255 element derivation. The
    /// generator is as secret as the password: it stays in secure memory.
    package static func calculateGenerator(password: SecureBytes, channelID: [UInt8], sessionID: [UInt8]) -> Ristretto255.SecretElement {
        let generatorString = generatorString(password: password, channelID: channelID, sessionID: sessionID)
        return Ristretto255.SecretElement(fromUniform: SHA512.secureHash([.secret(generatorString)]))
    }

    /// `G.scalar_mult_vfy(y, X)` (§8.3) on an encoded element, with the draft's
    /// `G.I` answer turned into an abort: throws `invalidElement` if `X` does
    /// not decode and `identityElement` if the product is the identity.
    package static func scalarMultVfy(_ scalar: Ristretto255.Scalar, _ encoded: [UInt8]) throws -> Ristretto255.SecretElement {
        try scalar.multiply(Ristretto255.Element(rawRepresentation: encoded))
    }

    /// `ISK = H.hash(lv_cat(G.DSI || b"_ISK", sid, K) || transcript)` (§7.2),
    /// with `K` fed from secure memory.
    package static func intermediateSessionKey(sessionID: [UInt8], k: Ristretto255.SecretElement, transcript: [UInt8]) -> SessionKey {
        let prefix = prependLen(iskLabel) + prependLen(sessionID) + leb128(k.bytes.count)
        return SessionKey(bytes: SHA512.secureHash([.bytes(prefix), .secret(k.bytes), .bytes(transcript)]))
    }

    /// The optional public session identifier of §10.6:
    /// `H.hash(b"CPaceSidOutput" || transcript)`.
    package static func sessionIDOutput(transcript: [UInt8]) -> [UInt8] {
        SHA512.hash(sessionIDOutputLabel + transcript)
    }
}

// MARK: - Key confirmation (§10.4)

extension CPace {
    /// `mac_key = H.hash(b"CPaceMac" || sid || ISK)` (§10.4), in secure memory.
    package static func confirmationKey(sessionID: [UInt8], sessionKey: SessionKey) -> SecureBytes {
        SHA512.secureHash([.bytes(macKeyLabel + sessionID), .secret(sessionKey.bytes)])
    }

    /// A party's tag over the message it sent, `MAC(mac_key, lv_cat(Y, AD))`
    /// (§10.4). The draft leaves the MAC open ("such as HMAC [RFC2104] or
    /// CMAC"); the choice of HMAC-SHA-512, the suite's own hash, is ours.
    package static func confirmationTag(key: SecureBytes, over message: Message) -> ConfirmationTag {
        ConfirmationTag(produced: HMACSHA512.authenticate(message.encoded, key: key))
    }
}
