/// A strict parser for the TOML subset in `TOMLDocument`. Anything outside the
/// subset is an error with its line, never silently skipped.
struct TOMLParser {
    private let bytes: [UInt8]
    private let file: String
    private var index = 0
    private var line = 1
    /// Lists open around the value being read: each is a call deeper, so the nesting is bounded
    /// (5,000 `[` overflowed the stack at start and at a reload's SIGHUP).
    private var depth = 0
    static let maxListDepth = 16

    init(text: String, file: String) {
        self.bytes = Array(text.utf8)
        self.file = file
    }

    static func parse(_ text: String, file: String) throws(PolicyError) -> TOMLDocument {
        var parser = TOMLParser(text: text, file: file)
        return try parser.document()
    }

    private func fail(_ message: String) -> PolicyError { PolicyError(file: file, line: line, message: message) }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func advance() {
        if current == UInt8(ascii: "\n") { line += 1 }
        index += 1
    }

    private mutating func skipSpaces() {
        while let c = current, c == UInt8(ascii: " ") || c == UInt8(ascii: "\t") { advance() }
    }

    private mutating func skipComment() {
        if current == UInt8(ascii: "#") { while let c = current, c != UInt8(ascii: "\n") { advance() } }
    }

    /// Spaces, an optional comment, then a newline or the end of the file.
    private mutating func endOfLine() throws(PolicyError) {
        skipSpaces()
        skipComment()
        if current == UInt8(ascii: "\r") { advance() }
        guard current == nil || current == UInt8(ascii: "\n") else {
            throw fail("unexpected text after the value; put one setting on each line")
        }
        if current != nil { advance() }
    }

    private mutating func document() throws(PolicyError) -> TOMLDocument {
        var document = TOMLDocument()
        document.tables.append(.init(name: "", line: 0))
        var seenTables: Set<String> = []
        while current != nil {
            skipSpaces()
            guard let c = current else { break }
            if c == UInt8(ascii: "#") || c == UInt8(ascii: "\n") || c == UInt8(ascii: "\r") {
                try endOfLine()
                continue
            }
            if c == UInt8(ascii: "[") {
                let headerLine = line
                advance()
                let isArray = current == UInt8(ascii: "[")
                if isArray { advance() }
                skipSpaces()
                let name = try key()
                skipSpaces()
                for _ in 0..<(isArray ? 2 : 1) {
                    guard current == UInt8(ascii: "]") else { throw fail("a table header must end with '\(isArray ? "]]" : "]")'") }
                    advance()
                }
                if !isArray {
                    guard seenTables.insert(name).inserted else { throw fail("table [\(name)] appears twice") }
                }
                document.tables.append(.init(name: isArray ? "[[\(name)]]" : name, line: headerLine))
                try endOfLine()
                continue
            }
            let keyLine = line
            let name = try key()
            skipSpaces()
            guard current == UInt8(ascii: "=") else { throw fail("expected '=' after '\(name)'") }
            advance()
            skipSpaces()
            let parsed = try value()
            let last = document.tables.count - 1
            guard document.tables[last].value(name) == nil else { throw PolicyError(file: file, line: keyLine, message: "'\(name)' is set twice") }
            document.tables[last].entries.append((name, TOMLDocument.Located(value: parsed, line: keyLine)))
            try endOfLine()
        }
        return document
    }

    private mutating func key() throws(PolicyError) -> String {
        if current == UInt8(ascii: "\"") { return try string() }
        if current == UInt8(ascii: "'") { return try literalString() }
        var out: [UInt8] = []
        while let c = current, Self.isBareKey(c) {
            out.append(c)
            advance()
        }
        guard !out.isEmpty else { throw fail("expected a name (letters, digits, '_' or '-')") }
        return String(decoding: out, as: UTF8.self)
    }

    private static func isBareKey(_ c: UInt8) -> Bool {
        (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z")) || (c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z"))
            || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) || c == UInt8(ascii: "_") || c == UInt8(ascii: "-")
    }

    private mutating func value() throws(PolicyError) -> TOMLDocument.Value {
        guard let c = current else { throw fail("expected a value") }
        switch c {
        case UInt8(ascii: "\""):
            return .string(try string())
        case UInt8(ascii: "'"):
            return .string(try literalString())
        case UInt8(ascii: "["):
            return .array(try array())
        case UInt8(ascii: "t"), UInt8(ascii: "f"):
            let word = try key()
            switch word {
            case "true": return .bool(true)
            case "false": return .bool(false)
            default: throw fail("expected true or false, found '\(word)'")
            }
        case UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return .integer(try integer())
        default:
            throw fail("expected a value: a \"string\" or 'string', a number, true/false or a [list]")
        }
    }

    private mutating func integer() throws(PolicyError) -> Int64 {
        var text = ""
        while let c = current, Self.isBareKey(c) || c == UInt8(ascii: "+") {
            if c != UInt8(ascii: "_") { text.append(Character(UnicodeScalar(c))) }
            advance()
        }
        guard let value = Int64(text) else { throw fail("'\(text)' is not a whole number") }
        return value
    }

    private mutating func string() throws(PolicyError) -> String {
        advance()  // opening quote
        var out: [UInt8] = []
        while true {
            guard let c = current, c != UInt8(ascii: "\n") else { throw fail("a string is not closed on its line") }
            advance()
            if c == UInt8(ascii: "\"") { break }
            if c == UInt8(ascii: "\\") {
                guard let e = current else { throw fail("a string ends in a lone backslash") }
                advance()
                switch e {
                case UInt8(ascii: "\""): out.append(e)
                case UInt8(ascii: "\\"): out.append(e)
                case UInt8(ascii: "n"): out.append(UInt8(ascii: "\n"))
                case UInt8(ascii: "t"): out.append(UInt8(ascii: "\t"))
                default: throw fail("unsupported escape '\\\(Character(UnicodeScalar(e)))' in a string")
                }
                continue
            }
            out.append(c)
        }
        guard let text = String(validating: out, as: UTF8.self) else { throw fail("a string is not valid UTF-8") }
        return text
    }

    /// A literal string, `'…'`: every character as written, no escapes, so it cannot hold `'`.
    private mutating func literalString() throws(PolicyError) -> String {
        advance()  // opening quote
        if current == UInt8(ascii: "'"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "'") {
            throw fail("multi-line literal strings ('''…''') are not supported; use '…' on one line")
        }
        var out: [UInt8] = []
        while true {
            guard let c = current, c != UInt8(ascii: "\n"), c != UInt8(ascii: "\r") else {
                throw fail("a 'literal string' is not closed on its line (it cannot hold ', and \\ is no escape in it)")
            }
            advance()
            if c == UInt8(ascii: "'") { break }
            guard c >= 0x20 || c == UInt8(ascii: "\t"), c != 0x7f else { throw fail("a 'literal string' holds a control character") }
            out.append(c)
        }
        guard let text = String(validating: out, as: UTF8.self) else { throw fail("a string is not valid UTF-8") }
        return text
    }

    private mutating func skipArraySpace() {
        while true {
            skipSpaces()
            skipComment()
            guard let c = current, c == UInt8(ascii: "\n") || c == UInt8(ascii: "\r") else { return }
            advance()
        }
    }

    private mutating func array() throws(PolicyError) -> [TOMLDocument.Located] {
        guard depth < Self.maxListDepth else { throw fail("lists nested more than \(Self.maxListDepth) deep") }
        depth += 1
        defer { depth -= 1 }
        advance()  // [
        var items: [TOMLDocument.Located] = []
        while true {
            skipArraySpace()
            guard let c = current else { throw fail("a list is not closed with ']'") }
            if c == UInt8(ascii: "]") {
                advance()
                return items
            }
            let itemLine = line
            items.append(.init(value: try value(), line: itemLine))
            skipArraySpace()
            if current == UInt8(ascii: ",") {
                advance()
            } else if current != UInt8(ascii: "]") {
                throw fail("expected ',' or ']' in a list")
            }
        }
    }
}
