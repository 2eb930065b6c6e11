import Hummingbird
import NIOCore
import KeyVaultCrypto
import KeyVaultAccount
import KeyVaultEngine
import KeyVaultPolicy

/// A JSON request body that carries passphrases, read so that no copy of a
/// passphrase is left in ordinary (swappable, never wiped) memory.
///
/// Foundation's decoders turn every value into a heap `String` the daemon
/// cannot wipe. These bodies are flat objects, so they are read here instead,
/// straight from the request's buffers (which the connection allocates with
/// `ByteBufferAllocator.wiping`, zeroed when released): a secret field is
/// decoded into `SecureBytes` (locked memory, wiped on release), every other
/// string field into a `String`. The grammar is JSON's (RFC 8259) for an
/// object whose known fields are strings or `null`; an unknown field may hold
/// any JSON value and is skipped, as Foundation's decoder would. Anything else
/// is `invalid`, with the body's expected shape and never its values.
struct SecretBody {
    private var strings: [String: String] = [:]
    private var secrets: [String: SecureBytes] = [:]
    /// Secret fields longer than `maxSecretBytes`: measured, never stored.
    private var tooLong: Set<String> = []
    private var shape = ""

    /// Reads the request's body (already collected whole by `ContractMiddleware`).
    static func read(_ request: Request, context: VaultRequestContext, shape: String,
                     secrets secretFields: Set<String>, strings stringFields: Set<String>) async throws -> SecretBody {
        let buffer = try await request.body.collect(upTo: context.maxUploadSize)
        return try buffer.withUnsafeReadableBytes { try parse($0, shape: shape, secrets: secretFields, strings: stringFields) }
    }

    /// Reads a body from bytes where they lie (no copy is made of them).
    static func parse(_ bytes: UnsafeRawBufferPointer, shape: String, secrets secretFields: Set<String>, strings stringFields: Set<String>) throws -> SecretBody {
        do {
            var reader = Reader(bytes: bytes, secretFields: secretFields, stringFields: stringFields)
            var body = try reader.object()
            body.shape = shape
            return body
        } catch is Malformed {
            throw Refusal.invalid("the body must be a JSON object: \(shape)")
        }
    }

    /// A required secret field, 1 to 1024 bytes.
    func secret(_ field: String) throws -> SecureBytes {
        guard !tooLong.contains(field) else { throw Refusal.invalid("'\(field)' is longer than \(SecretBody.maxSecretBytes) bytes") }
        guard let value = secrets[field] else { throw Refusal.invalid("the body must be a JSON object: \(shape)") }
        guard value.count > 0 else { throw Refusal.invalid("'\(field)' is empty") }
        return value
    }

    /// A required string field.
    func string(_ field: String) throws -> String {
        guard let value = strings[field] else { throw Refusal.invalid("the body must be a JSON object: \(shape)") }
        return value
    }

    /// An optional string field (absent, or `null`).
    func optional(_ field: String) -> String? { strings[field] }

    struct Malformed: Error {}

    /// The longest secret a body may carry, decoded (a longer one is measured, never stored).
    static let maxSecretBytes = 1024

    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        let secretFields: Set<String>
        let stringFields: Set<String>
        var index = 0

        init(bytes: UnsafeRawBufferPointer, secretFields: Set<String>, stringFields: Set<String>) {
            self.bytes = bytes
            self.secretFields = secretFields
            self.stringFields = stringFields
        }

        mutating func object() throws -> SecretBody {
            guard Self.isValidUTF8(bytes) else { throw Malformed() }
            var body = SecretBody()
            var seen: Set<String> = []
            skipSpace()
            try expect(UInt8(ascii: "{"))
            skipSpace()
            if peek() == UInt8(ascii: "}") {
                index += 1
            } else {
                while true {
                    skipSpace()
                    let name = try String(decoding: stringBytes(), as: UTF8.self)
                    guard seen.insert(name).inserted else { throw Malformed() }
                    skipSpace()
                    try expect(UInt8(ascii: ":"))
                    skipSpace()
                    if secretFields.contains(name) {
                        guard peek() == UInt8(ascii: "\"") else { throw Malformed() }
                        if let secret = try secretString() { body.secrets[name] = secret } else { body.tooLong.insert(name) }
                    } else if stringFields.contains(name) {
                        if literal("null") {
                            body.strings[name] = nil
                        } else {
                            body.strings[name] = try String(decoding: stringBytes(), as: UTF8.self)
                        }
                    } else {
                        try skipValue(depth: 0)
                    }
                    skipSpace()
                    guard let next = peek() else { throw Malformed() }
                    index += 1
                    if next == UInt8(ascii: "}") { break }
                    guard next == UInt8(ascii: ",") else { throw Malformed() }
                }
            }
            skipSpace()
            guard index == bytes.count else { throw Malformed() }
            return body
        }

        // MARK: Strings

        /// A string's decoded bytes, in ordinary memory: for names and non-secret fields.
        mutating func stringBytes() throws -> [UInt8] {
            var out: [UInt8] = []
            try decodeString { out.append($0) }
            return out
        }

        /// A secret string, decoded straight into locked memory in one pass; nil (read to its
        /// end, kept nowhere) if it is longer than `maxSecretBytes`.
        mutating func secretString() throws -> SecureBytes? {
            var tooLong = false
            let secret = try SecureBytes(capacity: SecretBody.maxSecretBytes) { out in
                var written = 0
                try decodeString { byte in
                    guard written < out.count else {
                        tooLong = true
                        return
                    }
                    out[written] = byte
                    written += 1
                }
                return written
            }
            return tooLong ? nil : secret
        }

        /// Decodes one JSON string at `index`, handing each byte of its UTF-8 to `sink`.
        mutating func decodeString(_ sink: (UInt8) -> Void) throws {
            try expect(UInt8(ascii: "\""))
            while true {
                guard let byte = peek() else { throw Malformed() }
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return
                case UInt8(ascii: "\\"):
                    guard let escaped = peek() else { throw Malformed() }
                    index += 1
                    switch escaped {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): sink(escaped)
                    case UInt8(ascii: "b"): sink(0x08)
                    case UInt8(ascii: "f"): sink(0x0C)
                    case UInt8(ascii: "n"): sink(0x0A)
                    case UInt8(ascii: "r"): sink(0x0D)
                    case UInt8(ascii: "t"): sink(0x09)
                    case UInt8(ascii: "u"):
                        var scalar = try hex4()
                        if (0xD800...0xDBFF).contains(scalar) {
                            // A high surrogate must be followed by an escaped low one.
                            guard literal("\\u") else { throw Malformed() }
                            let low = try hex4()
                            guard (0xDC00...0xDFFF).contains(low) else { throw Malformed() }
                            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        } else if (0xDC00...0xDFFF).contains(scalar) {
                            throw Malformed()
                        }
                        guard let unicode = Unicode.Scalar(scalar) else { throw Malformed() }
                        for unit in UTF8.encode(unicode)! { sink(unit) }
                    default:
                        throw Malformed()
                    }
                case 0x00..<0x20:
                    throw Malformed()  // control characters must be escaped
                default:
                    sink(byte)
                }
            }
        }

        mutating func hex4() throws -> UInt32 {
            var value: UInt32 = 0
            for _ in 0..<4 {
                guard let byte = peek() else { throw Malformed() }
                index += 1
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: throw Malformed()
                }
                value = value << 4 | UInt32(digit)
            }
            return value
        }

        // MARK: Values skipped

        /// Any JSON value (for a field this body does not know), nested at most 32 deep.
        mutating func skipValue(depth: Int) throws {
            guard depth < 32, let first = peek() else { throw Malformed() }
            switch first {
            case UInt8(ascii: "\""):
                try decodeString { _ in }
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                let close = first == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
                index += 1
                skipSpace()
                if peek() == close {
                    index += 1
                    return
                }
                while true {
                    skipSpace()
                    if first == UInt8(ascii: "{") {
                        try decodeString { _ in }
                        skipSpace()
                        try expect(UInt8(ascii: ":"))
                        skipSpace()
                    }
                    try skipValue(depth: depth + 1)
                    skipSpace()
                    guard let next = peek() else { throw Malformed() }
                    index += 1
                    if next == close { return }
                    guard next == UInt8(ascii: ",") else { throw Malformed() }
                }
            default:
                if literal("true") || literal("false") || literal("null") { return }
                try skipNumber()
            }
        }

        /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
        mutating func skipNumber() throws {
            if peek() == UInt8(ascii: "-") { index += 1 }
            guard let lead = peek(), isDigit(lead) else { throw Malformed() }
            index += 1
            if lead != UInt8(ascii: "0") { skipDigits() }
            if peek() == UInt8(ascii: ".") {
                index += 1
                guard let digit = peek(), isDigit(digit) else { throw Malformed() }
                skipDigits()
            }
            if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
                index += 1
                if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { index += 1 }
                guard let digit = peek(), isDigit(digit) else { throw Malformed() }
                skipDigits()
            }
        }

        mutating func skipDigits() {
            while let byte = peek(), isDigit(byte) { index += 1 }
        }

        func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

        // MARK: Bytes

        func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func expect(_ byte: UInt8) throws {
            guard peek() == byte else { throw Malformed() }
            index += 1
        }

        /// Consumes `text` if it comes next.
        mutating func literal(_ text: StaticString) -> Bool {
            let count = text.utf8CodeUnitCount
            guard index + count <= bytes.count else { return false }
            for i in 0..<count where bytes[index + i] != text.utf8Start[i] { return false }
            index += count
            return true
        }

        mutating func skipSpace() {
            while let byte = peek(), byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
        }

        /// The whole body is UTF-8 (JSON's encoding), checked where it lies: no copy is made.
        static func isValidUTF8(_ bytes: UnsafeRawBufferPointer) -> Bool {
            var iterator = bytes.makeIterator()
            var parser = Unicode.UTF8.ForwardParser()
            while true {
                switch parser.parseScalar(from: &iterator) {
                case .valid: continue
                case .emptyInput: return true
                case .error: return false
                }
            }
        }
    }
}
