/// An account: an opaque, stable user ID such as the `sub` of a Sign in with
/// Apple identity token. `[A-Za-z0-9._-]`, 1 to 128 characters. Validated
/// where it enters; it is never used to build a path. Beside the IDs, with no
/// dependency: the CLI checks an account it is given before it asks the daemon.
package struct AccountID: Hashable, Sendable, Comparable, CustomStringConvertible {
    package static let maxLength = 128
    package let rawValue: String

    package init(validating raw: String) throws(InvalidInput) {
        guard !raw.isEmpty else { throw InvalidInput("the account ID is empty; it must be 1 to 128 characters of A-Z, a-z, 0-9, '.', '_' or '-'") }
        let utf8 = raw.utf8
        guard utf8.count <= Self.maxLength else {
            throw InvalidInput("the account ID is \(utf8.count) bytes long; the limit is 128 characters of A-Z, a-z, 0-9, '.', '_' or '-'")
        }
        guard utf8.allSatisfy(Self.isAllowed) else {
            throw InvalidInput("the account ID may contain only A-Z, a-z, 0-9, '.', '_' and '-'")
        }
        self.rawValue = raw
    }

    private static func isAllowed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }

    package var description: String { rawValue }
    package static func < (a: AccountID, b: AccountID) -> Bool { a.rawValue < b.rawValue }
}

/// Bad input from a caller, with a sentence a person understands.
package struct InvalidInput: Error, Sendable, Equatable, CustomStringConvertible {
    package let message: String
    package init(_ message: String) { self.message = message }
    package var description: String { message }
}
