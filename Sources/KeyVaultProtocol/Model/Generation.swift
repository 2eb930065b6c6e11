/// Which of an account's keys, by number: 1 for the key it was made with, one
/// more for each rotation. Two devices that rotated while apart can announce
/// the same number (the key ID then tells them apart). The records write it as
/// an 8-byte integer from 1 to 2^31 − 1, JSON and SQL as its number; anything
/// outside that is refused where it enters.
package struct Generation: Hashable, Comparable, Sendable, Codable, CustomStringConvertible, ExpressibleByIntegerLiteral {
    package static let range: ClosedRange<Int> = 1...Int(Int32.max)
    package static let first = Generation(integerLiteral: 1)

    package let value: Int

    /// A number read from outside: nil if it is not a generation number.
    package init?(_ number: some BinaryInteger) {
        guard let number = Int(exactly: number), Self.range.contains(number) else { return nil }
        self.value = number
    }

    /// A literal in code or a test.
    package init(integerLiteral number: Int) {
        precondition(Self.range.contains(number), "a generation number is from 1 to 2^31 − 1")
        self.value = number
    }

    /// The number a rotation after this one announces; nil after 2^31 − 1 (a log's
    /// announces climb by one at most, so no log gets there: PROTOCOL.md, `announce`).
    package var next: Generation? { Generation(value + 1) }

    package static func < (a: Self, b: Self) -> Bool { a.value < b.value }
    package var description: String { String(value) }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        guard let generation = Generation(try container.decode(Int.self)) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "a generation number is from 1 to 2^31 − 1")
        }
        self = generation
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }
}
