/// A number of its own kind (a relay cursor, a log number): compared and
/// printed as its number, and held in JSON as the bare number, so a typed
/// value changes nothing on the wire.
package protocol NumberValue: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    associatedtype Value: FixedWidthInteger & Codable & Sendable
    var value: Value { get }
    init(_ value: Value)
}

extension NumberValue {
    package static func < (a: Self, b: Self) -> Bool { a.value < b.value }
    package var description: String { String(value) }

    package init(from decoder: any Decoder) throws {
        self.init(try decoder.singleValueContainer().decode(Value.self))
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }
}
