/// An entry's place in its account's circle log: 0 for the genesis, one more
/// for each entry after it. The records write it as an 8-byte integer, JSON
/// and SQL as its number.
package struct LogSeq: NumberValue, ExpressibleByIntegerLiteral {
    package let value: UInt64

    package init(_ value: UInt64) { self.value = value }
    package init(integerLiteral value: UInt64) { self.value = value }

    /// The entry at `index` of a log held in memory.
    package init(index: Int) {
        precondition(index >= 0, "a log has no entry before the genesis")
        value = UInt64(index)
    }

    /// From a stored column (a negative number, which no log has, reads as 0:
    /// the entry's own bytes say its place, and are verified).
    package init(stored value: Int64) { self.value = UInt64(max(value, 0)) }

    /// For a signed 64-bit column; no log reaches 2^63 entries.
    package var stored: Int64 { Int64(clamping: value) }

    package static let genesis: LogSeq = 0

    /// Its position in a log held in memory. A number too large for one (read
    /// from outside) comes out as `Int.max`, past the end of every log.
    package var index: Int { Int(clamping: value) }
}
