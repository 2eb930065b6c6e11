@testable import KeyVault
@testable import KeyVaultEngine
@testable import KeyVaultPolicy
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultAccount
import Testing

/// The reader of bodies that carry passphrases: JSON's grammar for a flat object,
/// one outcome per vector.
@Suite("SecretBody: passphrase bodies read without a copy outside locked memory")
struct SecretBodyTests {
    static func parse(_ text: String) throws -> SecretBody {
        let bytes = Array(text.utf8)
        return try bytes.withUnsafeBytes { try SecretBody.parse($0, shape: "{…}", secrets: ["passphrase"], strings: ["user", "deviceName"]) }
    }

    static func secret(_ text: String) throws -> [UInt8] {
        try parse(text).secret("passphrase").withUnsafeBytes { Array($0) }
    }

    @Test("a flat object: secrets in locked memory, strings as strings, escapes decoded, unknown fields skipped",
          arguments: [
            (#"{"passphrase": "pw", "user": "alice"}"#, "pw"),
            (" {\n\t\"passphrase\" : \"a\\\"b\\\\c\\/d\" } ", "a\"b\\c/d"),
            (#"{"passphrase": "\u00e9\u20ac\ud83d\ude00"}"#, "é€😀"),
            (#"{"passphrase": "\b\f\n\r\t"}"#, "\u{8}\u{c}\n\r\t"),
            (#"{"extra": [1, -2.5e+3, {"a": [true, false, null]}, "x"], "passphrase": "pw"}"#, "pw"),
            (#"{"passphrase": "ünïcödé"}"#, "ünïcödé"),
          ])
    func accepted(_ body: String, _ expected: String) throws {
        #expect(try Self.secret(body) == Array(expected.utf8))
    }

    @Test("strings and null")
    func strings() throws {
        let body = try Self.parse(#"{"passphrase": "pw", "user": "al\u0069ce", "deviceName": null}"#)
        #expect(try body.string("user") == "alice")
        #expect(body.optional("deviceName") == nil)
    }

    @Test("anything else is invalid, with the shape and never the value",
          arguments: [
            "", "[]", "{", #"{"passphrase": "pw""#, #"{"passphrase": "pw",}"#, #"{"passphrase": pw}"#,
            #"{"passphrase": 1}"#, #"{"passphrase": null}"#, #"{"passphrase": "a\qb"}"#, #"{"passphrase": "\ud800"}"#,
            #"{"passphrase": "\udc00x"}"#, #"{"passphrase": "\u12"}"#, "{\"passphrase\": \"a\u{1}b\"}",
            #"{"passphrase": "pw", "passphrase": "other"}"#, #"{"passphrase": "pw"} x"#, #"{"x": 01, "passphrase": "pw"}"#,
            #"{"x": [1,], "passphrase": "pw"}"#, #"{"x": tru, "passphrase": "pw"}"#, #"{"user": "pw"}"#,
            String(repeating: "[", count: 40) + String(repeating: "]", count: 40),
          ])
    func refused(_ body: String) {
        do {
            _ = try Self.secret(body)
            Issue.record("accepted: \(body)")
        } catch let refusal as Refusal {
            #expect(refusal.state == .invalid)
            #expect(refusal.message.contains("the body must be a JSON object: {…}"), "\(refusal.message)")
            #expect(!refusal.message.contains("pw"))
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test("invalid UTF-8 anywhere is invalid")
    func notUTF8() {
        let bytes: [UInt8] = Array(#"{"passphrase": ""#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8)
        #expect(throws: Refusal.self) { try bytes.withUnsafeBytes { try SecretBody.parse($0, shape: "", secrets: ["passphrase"], strings: []) } }
    }

    @Test("an empty passphrase, and one over 1024 bytes, are refused by name; the long one is never stored")
    func bounds() throws {
        #expect(throws: Refusal.self) { try Self.secret(#"{"passphrase": ""}"#) }
        let long = String(repeating: "x", count: 1025)
        do {
            _ = try Self.secret(#"{"passphrase": "\#(long)"}"#)
            Issue.record("a 1025-byte passphrase was accepted")
        } catch let refusal as Refusal {
            #expect(refusal.message == "'passphrase' is longer than 1024 bytes")
        }
        #expect(try Self.secret(#"{"passphrase": "\#(String(repeating: "y", count: 1024))"}"#).count == 1024)
    }
}
