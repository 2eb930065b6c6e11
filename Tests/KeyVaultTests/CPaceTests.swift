import Foundation
import Testing
import KeyVaultCrypto

/// CPace (CPACE-RISTR255-SHA512) against draft-irtf-cfrg-cpace-21's own test
/// vectors (Appendix A string utilities, Appendix B.3 ristretto255/SHA-512),
/// then whole runs: agreement, a wrong password, substituted or changed
/// messages and the identity element, each ending in its one outcome.
@Suite("CPace: draft-irtf-cfrg-cpace-21 vectors and runs")
struct CPaceTests {
    struct File: Decodable {
        struct PrependLen: Decodable { var inputHex, outputHex: String }
        struct LvCat: Decodable { var partsHex: [String]; var outputHex: String }
        struct Order: Decodable { var aHex, bHex: String; var larger: Bool }
        struct OCat: Decodable { var aHex, bHex, outputHex: String }
        struct Transcript: Decodable { var yaHex, adaHex, ybHex, adbHex, outputHex: String }
        struct Exchange: Decodable {
            var prsHex, ciHex, sidHex: String
            var zpadLength: Int
            var generatorStringHex, generatorHashHex, generatorHex: String
            var adaHex, yaScalarHex, yaHex, adbHex, ybScalarHex, ybHex, kHex: String
            var transcriptIRHex, iskLabelHex, iskInputIRHex, iskIRHex: String
            var transcriptOCHex, iskInputOCHex, iskOCHex: String
            var sidOutputIRHex, sidOutputOCHex: String
        }
        struct ScalarMult: Decodable { var scalarHex, elementHex, productHex: String }
        struct Invalid: Decodable {
            struct Case: Decodable { var name, elementHex, expect: String }
            var scalarHex: String
            var cases: [Case]
        }
        struct Confirmation: Decodable { var source, macKeyHex, taHex, tbHex: String }
        var draft, suite, source: String
        var prependLen: [PrependLen]
        var lvCat: [LvCat]
        var lexicographicallyLarger: [Order]
        var oCat: [OCat]
        var transcriptIR, transcriptOC: [Transcript]
        var exchange: Exchange
        var scalarMult: ScalarMult
        var scalarMultVfyInvalid: Invalid
        var confirmation: Confirmation
    }

    static func file() throws -> File { try Vectors.load("cpace.json", as: File.self) }

    static func scalar(_ hex: String) throws -> Ristretto255.Scalar {
        Ristretto255.Scalar(reducing: SecureBytes(copying: try Vectors.hex(hex)))
    }

    static func inputs(_ e: File.Exchange) throws -> CPace.Inputs {
        CPace.Inputs(password: SecureBytes(copying: try Vectors.hex(e.prsHex)),
                     channelID: try Vectors.hex(e.ciHex), sessionID: try Vectors.hex(e.sidHex))
    }

    static func outcome(_ error: any Error) -> String {
        guard let error = error as? CPaceError else { return "other: \(error)" }
        switch error {
        case .invalidElement: return "invalidElement"
        case .identityElement: return "identityElement"
        case .malformedMessage: return "malformedMessage"
        case .confirmationFailed: return "confirmationFailed"
        }
    }

    // MARK: - The draft's vectors

    @Test("the vector file is draft-21's, for this suite")
    func provenance() throws {
        let v = try Self.file()
        #expect(v.draft == CPace.specification)
        #expect(v.draft == "draft-irtf-cfrg-cpace-21")
        #expect(v.suite == CPace.suite)
        #expect(v.source.contains("B.3"))
        #expect(v.confirmation.source.hasPrefix("NOT from the draft"))
    }

    @Test("prepend_len, lv_cat, lexicographic order, o_cat, transcript_ir and transcript_oc (Appendix A.1, A.3)")
    func stringUtilities() throws {
        let v = try Self.file()
        #expect(v.prependLen.count == 4)
        for c in v.prependLen {
            #expect(Hex.encode(CPace.prependLen(try Vectors.hex(c.inputHex))) == c.outputHex)
        }
        #expect(v.lvCat.count == 1)
        for c in v.lvCat {
            let parts = try c.partsHex.map { try Vectors.hex($0) }
            #expect(Hex.encode(CPace.lvCat(parts)) == c.outputHex)
            #expect(CPace.lvSplit(try Vectors.hex(c.outputHex), count: parts.count) == parts)
        }
        #expect(v.lexicographicallyLarger.count == 6)
        for c in v.lexicographicallyLarger {
            #expect(CPace.lexicographicallyLarger(try Vectors.hex(c.aHex), try Vectors.hex(c.bHex)) == c.larger, "\(c.aHex) > \(c.bHex)")
        }
        #expect(v.oCat.count == 2)
        for c in v.oCat {
            #expect(Hex.encode(CPace.oCat(try Vectors.hex(c.aHex), try Vectors.hex(c.bHex))) == c.outputHex)
        }
        #expect(v.transcriptIR.count == 2 && v.transcriptOC.count == 2)
        for (mode, cases) in [(CPace.Transcript.initiatorResponder, v.transcriptIR), (.orderedConcatenation, v.transcriptOC)] {
            for c in cases {
                let t = mode.of(try Vectors.hex(c.yaHex), try Vectors.hex(c.adaHex), try Vectors.hex(c.ybHex), try Vectors.hex(c.adbHex))
                #expect(Hex.encode(t) == c.outputHex)
            }
        }
    }

    @Test("LEB128 lengths past one byte, and the split refuses what lv_cat never makes")
    func lengthEncoding() throws {
        #expect(CPace.leb128(0) == [0x00])
        #expect(CPace.leb128(127) == [0x7f])
        #expect(CPace.leb128(128) == [0x80, 0x01])
        #expect(CPace.leb128(300) == [0xac, 0x02])
        #expect(CPace.leb128(16384) == [0x80, 0x80, 0x01])
        let long = [UInt8](repeating: 7, count: 300)
        #expect(CPace.lvSplit(CPace.lvCat(long, [1]), count: 2) == [long, [1]])
        #expect(CPace.lvSplit([0x01, 0xaa], count: 2) == nil, "a part missing")
        #expect(CPace.lvSplit([0x01, 0xaa, 0x00, 0x00], count: 2) == nil, "bytes left over")
        #expect(CPace.lvSplit([0x02, 0xaa], count: 1) == nil, "a length past the end")
        #expect(CPace.lvSplit([0x81, 0x00, 0xaa], count: 1) == nil, "a length not in its shortest form")
        #expect(CPace.lvSplit([0x80], count: 1) == nil, "a length cut short")
    }

    @Test("generator_string, its SHA-512 and the generator g (B.3.1)")
    func generator() throws {
        let e = try Self.file().exchange
        let password = SecureBytes(copying: try Vectors.hex(e.prsHex))
        let ci = try Vectors.hex(e.ciHex), sid = try Vectors.hex(e.sidHex)
        let string = CPace.generatorString(password: password, channelID: ci, sessionID: sid)
        #expect(string.hexEncodedString() == e.generatorStringHex)
        // The zero padding fills the first SHA-512 block after DSI and PRS.
        #expect(string.count == 18 + 9 + 1 + e.zpadLength + 1 + ci.count + 1 + sid.count)
        #expect(SHA512.secureHash([.secret(string)]).hexEncodedString() == e.generatorHashHex)
        #expect(Hex.encode(SHA512.hash(try Vectors.hex(e.generatorStringHex))) == e.generatorHashHex)
        let g = CPace.calculateGenerator(password: password, channelID: ci, sessionID: sid)
        #expect(g.bytes.hexEncodedString() == e.generatorHex)
    }

    @Test("Ya, Yb, K both ways, the transcripts, ISK in both modes and sid_output (B.3.2 to B.3.7)")
    func exchange() throws {
        let e = try Self.file().exchange
        let password = SecureBytes(copying: try Vectors.hex(e.prsHex))
        let sid = try Vectors.hex(e.sidHex)
        let g = CPace.calculateGenerator(password: password, channelID: try Vectors.hex(e.ciHex), sessionID: sid)
        let ya = try Self.scalar(e.yaScalarHex), yb = try Self.scalar(e.ybScalarHex)
        let bigYa = try ya.multiply(g), bigYb = try yb.multiply(g)
        #expect(Hex.encode(bigYa.rawRepresentation) == e.yaHex)
        #expect(Hex.encode(bigYb.rawRepresentation) == e.ybHex)

        let kA = try CPace.scalarMultVfy(ya, bigYb.rawRepresentation)
        let kB = try CPace.scalarMultVfy(yb, bigYa.rawRepresentation)
        #expect(kA.bytes.hexEncodedString() == e.kHex)
        #expect(kB.bytes.hexEncodedString() == e.kHex)

        let ada = try Vectors.hex(e.adaHex), adb = try Vectors.hex(e.adbHex)
        #expect(Hex.encode(CPace.iskLabel) == e.iskLabelHex)
        let cases: [(CPace.Transcript, String, String, String, String)] = [
            (.initiatorResponder, e.transcriptIRHex, e.iskInputIRHex, e.iskIRHex, e.sidOutputIRHex),
            (.orderedConcatenation, e.transcriptOCHex, e.iskInputOCHex, e.iskOCHex, e.sidOutputOCHex),
        ]
        for (mode, transcriptHex, iskInputHex, iskHex, sidOutputHex) in cases {
            let transcript = mode.of(bigYa.rawRepresentation, ada, bigYb.rawRepresentation, adb)
            #expect(Hex.encode(transcript) == transcriptHex)
            // The bytes ISK hashes, spelled out from the vector's K: what
            // intermediateSessionKey streams with K from secure memory.
            let iskInput = CPace.lvCat(CPace.iskLabel, sid, try Vectors.hex(e.kHex)) + transcript
            #expect(Hex.encode(iskInput) == iskInputHex)
            #expect(Hex.encode(SHA512.hash(iskInput)) == iskHex)
            let isk = CPace.intermediateSessionKey(sessionID: sid, k: kA, transcript: transcript)
            #expect(isk.bytes.hexEncodedString() == iskHex)
            #expect(Hex.encode(CPace.sessionIDOutput(transcript: transcript)) == sidOutputHex)
        }
    }

    @Test("scalar_mult and scalar_mult_vfy with valid inputs (B.3.10)")
    func scalarMultValid() throws {
        let v = try Self.file().scalarMult
        let s = try Self.scalar(v.scalarHex)
        let x = try Ristretto255.Element(rawRepresentation: try Vectors.hex(v.elementHex))
        #expect(try s.multiply(x).bytes.hexEncodedString() == v.productHex)
        #expect(try CPace.scalarMultVfy(s, try Vectors.hex(v.elementHex)).bytes.hexEncodedString() == v.productHex)
    }

    @Test("scalar_mult_vfy refuses the draft's invalid inputs, and a run that meets them aborts (B.3.11)")
    func scalarMultVfyInvalid() throws {
        let v = try Self.file()
        let invalid = v.scalarMultVfyInvalid
        #expect(invalid.cases.count == 2)
        let s = try Self.scalar(invalid.scalarHex)
        for c in invalid.cases {
            let y = try Vectors.hex(c.elementHex)
            // G.scalar_mult_vfy(s, Y) = G.I: here, an error.
            do {
                _ = try CPace.scalarMultVfy(s, y)
                Issue.record("\(c.name): scalar_mult_vfy answered an element")
            } catch {
                #expect(Self.outcome(error) == c.expect, "\(c.name)")
            }
            // In A's message, B must abort.
            do {
                let message = try CPace.Message(share: y, associatedData: try Vectors.hex(v.exchange.adaHex))
                _ = try CPace.Responder(respondingTo: message, inputs: try Self.inputs(v.exchange), associatedData: [])
                Issue.record("\(c.name): the responder accepted it")
            } catch {
                #expect(Self.outcome(error) == c.expect, "\(c.name), responder")
            }
            // In B's message, A must abort.
            let initiator = try CPace.Initiator(inputs: try Self.inputs(v.exchange), associatedData: [])
            do {
                let message = try CPace.Message(share: y, associatedData: try Vectors.hex(v.exchange.adbHex))
                let tag = try CPace.ConfirmationTag(rawRepresentation: [UInt8](repeating: 0, count: CPace.confirmationTagByteCount))
                _ = try initiator.finish(CPace.Response(message: message, confirmation: tag))
                Issue.record("\(c.name): the initiator accepted it")
            } catch {
                #expect(Self.outcome(error) == c.expect, "\(c.name), initiator")
            }
        }
    }

    @Test("a whole run with the draft's scalars: B.3's Yb and ISK (IR), and the confirmation tags of §10.4")
    func runWithDraftScalars() throws {
        let v = try Self.file()
        let e = v.exchange
        let inputs = try Self.inputs(e)
        let initiator = try CPace.Initiator(inputs: inputs, associatedData: try Vectors.hex(e.adaHex),
                                            scalarForTesting: try Self.scalar(e.yaScalarHex))
        #expect(Hex.encode(initiator.message.share) == e.yaHex)
        let responder = try CPace.Responder(respondingTo: initiator.message, inputs: inputs, associatedData: try Vectors.hex(e.adbHex),
                                            scalarForTesting: try Self.scalar(e.ybScalarHex))
        #expect(Hex.encode(responder.response.message.share) == e.ybHex)
        #expect(Hex.encode(responder.response.confirmation.rawRepresentation) == v.confirmation.tbHex)

        let isk = CPace.SessionKey(bytes: SecureBytes(copying: try Vectors.hex(e.iskIRHex)))
        #expect(CPace.confirmationKey(sessionID: inputs.sessionID, sessionKey: isk).hexEncodedString() == v.confirmation.macKeyHex)

        let finished = try initiator.finish(responder.response)
        #expect(finished.sessionKey.bytes.hexEncodedString() == e.iskIRHex)
        #expect(Hex.encode(finished.confirmation.rawRepresentation) == v.confirmation.taHex)
        let key = try responder.finish(finished.confirmation)
        #expect(key.bytes.hexEncodedString() == e.iskIRHex)
    }

    // MARK: - Runs

    static func inputs(_ password: String, sid: [UInt8] = Array("pairing-session-1".utf8)) -> CPace.Inputs {
        CPace.Inputs(password: SecureBytes(copying: Array(password.utf8)),
                     channelID: CPace.lvCat(Array("device-A".utf8), Array("device-B".utf8)), sessionID: sid)
    }

    @Test("both sides agree on the session key, and each run's key is fresh")
    func roundTrip() throws {
        var keys: [CPace.SessionKey] = []
        for _ in 0..<2 {
            let initiator = try CPace.Initiator(inputs: Self.inputs("123-456"), associatedData: Array("A".utf8))
            // Over the wire and back.
            let message = try CPace.Message(encoded: initiator.message.encoded)
            #expect(message == initiator.message)
            let responder = try CPace.Responder(respondingTo: message, inputs: Self.inputs("123-456"), associatedData: Array("B".utf8))
            let finished = try initiator.finish(responder.response)
            let key = try responder.finish(finished.confirmation)
            #expect(key.constantTimeEquals(finished.sessionKey))
            #expect(key.bytes.count == CPace.sessionKeyByteCount)
            keys.append(key)
        }
        #expect(!keys[0].constantTimeEquals(keys[1]))
    }

    @Test("a wrong password fails confirmation on both sides")
    func wrongPassword() throws {
        // A's side: B answers with another password; A refuses B's tag and sends none.
        let initiator = try CPace.Initiator(inputs: Self.inputs("123-456"), associatedData: [])
        let responder = try CPace.Responder(respondingTo: initiator.message, inputs: Self.inputs("123-457"), associatedData: [])
        do {
            _ = try initiator.finish(responder.response)
            Issue.record("the initiator accepted a wrong password")
        } catch {
            #expect(Self.outcome(error) == "confirmationFailed")
        }

        // B's side: an initiator with another password who, unlike ours, sends
        // Ta without checking Tb, computed with the draft's own steps.
        let guess = Self.inputs("000-000")
        let ya = Ristretto255.Scalar.random()
        let g = CPace.calculateGenerator(password: guess.password, channelID: guess.channelID, sessionID: guess.sessionID)
        let message = CPace.Message(element: try ya.multiply(g), associatedData: [])
        let victim = try CPace.Responder(respondingTo: message, inputs: Self.inputs("123-456"), associatedData: [])
        let k = try ya.multiply(victim.response.message.element)
        let transcript = CPace.Transcript.initiatorResponder.of(message.share, [], victim.response.message.share, [])
        let isk = CPace.intermediateSessionKey(sessionID: guess.sessionID, k: k, transcript: transcript)
        let ta = CPace.confirmationTag(key: CPace.confirmationKey(sessionID: guess.sessionID, sessionKey: isk), over: message)
        do {
            _ = try victim.finish(ta)
            Issue.record("the responder accepted a wrong password")
        } catch {
            #expect(Self.outcome(error) == "confirmationFailed")
        }
    }

    @Test("the same password with another session or channel identifier does not confirm")
    func otherSessionOrChannel() throws {
        for other in [Self.inputs("123-456", sid: Array("pairing-session-2".utf8)),
                      CPace.Inputs(password: SecureBytes(copying: Array("123-456".utf8)), channelID: [], sessionID: Array("pairing-session-1".utf8))] {
            let initiator = try CPace.Initiator(inputs: Self.inputs("123-456"), associatedData: [])
            let responder = try CPace.Responder(respondingTo: initiator.message, inputs: other, associatedData: [])
            do {
                _ = try initiator.finish(responder.response)
                Issue.record("confirmed across different inputs")
            } catch {
                #expect(Self.outcome(error) == "confirmationFailed")
            }
        }
    }

    @Test("a substituted element or changed associated data fails confirmation")
    func substitutedMessages() throws {
        let other = try CPace.Initiator(inputs: Self.inputs("999-999"), associatedData: [])

        // Ya replaced on its way to B.
        let a1 = try CPace.Initiator(inputs: Self.inputs("123-456"), associatedData: [])
        let b1 = try CPace.Responder(respondingTo: other.message, inputs: Self.inputs("123-456"), associatedData: [])
        do {
            _ = try a1.finish(b1.response)
            Issue.record("the initiator accepted a run on a substituted Ya")
        } catch {
            #expect(Self.outcome(error) == "confirmationFailed")
        }

        // Yb replaced on its way to A, B's tag kept.
        let a2 = try CPace.Initiator(inputs: Self.inputs("123-456"), associatedData: [])
        let b2 = try CPace.Responder(respondingTo: a2.message, inputs: Self.inputs("123-456"), associatedData: [])
        let forged = CPace.Response(message: other.message, confirmation: b2.response.confirmation)
        do {
            _ = try a2.finish(forged)
            Issue.record("the initiator accepted a substituted Yb")
        } catch {
            #expect(Self.outcome(error) == "confirmationFailed")
        }

        // ADb changed on its way to A.
        let a3 = try CPace.Initiator(inputs: Self.inputs("123-456"), associatedData: Array("A".utf8))
        let b3 = try CPace.Responder(respondingTo: a3.message, inputs: Self.inputs("123-456"), associatedData: Array("B".utf8))
        let changed = CPace.Response(message: CPace.Message(element: b3.response.message.element, associatedData: Array("C".utf8)),
                                     confirmation: b3.response.confirmation)
        do {
            _ = try a3.finish(changed)
            Issue.record("the initiator accepted changed ADb")
        } catch {
            #expect(Self.outcome(error) == "confirmationFailed")
        }

        // ADa changed on its way to B: A's honest tag then fails at B.
        let a4 = try CPace.Initiator(inputs: Self.inputs("123-456"), associatedData: Array("A".utf8))
        let relayed = CPace.Message(element: a4.message.element, associatedData: Array("Z".utf8))
        let b4 = try CPace.Responder(respondingTo: relayed, inputs: Self.inputs("123-456"), associatedData: [])
        do {
            _ = try a4.finish(b4.response)
            Issue.record("the initiator accepted a run on changed ADa")
        } catch {
            #expect(Self.outcome(error) == "confirmationFailed")
        }

        // A tag from another, successful run does not confirm this one.
        let a5 = try CPace.Initiator(inputs: Self.inputs("123-456"), associatedData: [])
        let b5 = try CPace.Responder(respondingTo: a5.message, inputs: Self.inputs("123-456"), associatedData: [])
        let a6 = try CPace.Initiator(inputs: Self.inputs("123-456"), associatedData: [])
        let b6 = try CPace.Responder(respondingTo: a6.message, inputs: Self.inputs("123-456"), associatedData: [])
        let finished6 = try a6.finish(b6.response)
        _ = try a5.finish(b5.response)
        do {
            _ = try b5.finish(finished6.confirmation)
            Issue.record("the responder accepted another run's tag")
        } catch {
            #expect(Self.outcome(error) == "confirmationFailed")
        }
    }

    @Test("the identity element is rejected by both sides")
    func identityElement() throws {
        let identity = [UInt8](repeating: 0, count: Ristretto255.elementByteCount)
        // It decodes (RFC 9496): the scalar multiplication is what refuses it.
        let message = try CPace.Message(share: identity, associatedData: [])
        #expect(throws: CPaceError.identityElement) {
            _ = try CPace.Responder(respondingTo: message, inputs: Self.inputs("123-456"), associatedData: [])
        }
        #expect(throws: CPaceError.identityElement) { try Ristretto255.Scalar.random().multiply(message.element) }
        let initiator = try CPace.Initiator(inputs: Self.inputs("123-456"), associatedData: [])
        let tag = try CPace.ConfirmationTag(rawRepresentation: [UInt8](repeating: 0, count: CPace.confirmationTagByteCount))
        do {
            _ = try initiator.finish(CPace.Response(message: message, confirmation: tag))
            Issue.record("the initiator accepted the identity")
        } catch {
            #expect(Self.outcome(error) == "identityElement")
        }
    }

    @Test("messages, elements and tags are checked where they enter")
    func decoding() throws {
        let initiator = try CPace.Initiator(inputs: Self.inputs("123-456"), associatedData: Array("hello".utf8))
        let encoded = initiator.message.encoded
        #expect(encoded.count == 1 + 32 + 1 + 5)
        #expect(try CPace.Message(encoded: encoded) == initiator.message)
        #expect(throws: CPaceError.malformedMessage) { try CPace.Message(encoded: encoded + [0]) }
        #expect(throws: CPaceError.malformedMessage) { try CPace.Message(encoded: Array(encoded.dropLast())) }
        #expect(throws: CPaceError.malformedMessage) { try CPace.Message(encoded: []) }
        #expect(throws: CPaceError.invalidElement) { try CPace.Message(encoded: CPace.lvCat(Array(initiator.message.share.dropLast()), [])) }
        #expect(throws: CPaceError.invalidElement) { try CPace.Message(share: initiator.message.share + [0], associatedData: []) }
        // A share with its top bit set is never canonical.
        var high = initiator.message.share
        high[31] |= 0x80
        #expect(throws: CPaceError.invalidElement) { try CPace.Message(share: high, associatedData: []) }
        #expect(throws: CryptoError.self) { try CPace.ConfirmationTag(rawRepresentation: [UInt8](repeating: 0, count: 32)) }
        #expect(throws: Never.self) { try CPace.ConfirmationTag(rawRepresentation: [UInt8](repeating: 0, count: 64)) }
    }

    @Test("scalars are reduced modulo the group order and random scalars differ")
    func scalars() throws {
        // ℓ = 2^252 + 27742317777372353535851937790883648493, little endian; ℓ + 1 reduces to 1.
        let order = try Vectors.hex("edd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010")
        var orderPlusOne = order
        orderPlusOne[0] += 1
        let one = Ristretto255.Scalar(reducing: SecureBytes(copying: orderPlusOne))
        #expect(one.bytes.hexEncodedString() == "01" + String(repeating: "00", count: 31))
        // 1·X = X for the draft's valid point.
        let x = try Vectors.hex(try Self.file().scalarMult.elementHex)
        #expect(try CPace.scalarMultVfy(one, x).bytes.hexEncodedString() == Hex.encode(x))
        #expect(!Ristretto255.Scalar.random().bytes.constantTimeEquals(Ristretto255.Scalar.random().bytes))
    }
}
