/// A row's place on the relay: the relay numbers the rows it takes in
/// increasing order, and a reader asks for those after the last it kept.
/// Only the relay makes one; a device keeps and compares them. JSON and SQL
/// hold it as its integer.
package struct RelayCursor: NumberValue, ExpressibleByIntegerLiteral {
    package let value: Int64

    package init(_ value: Int64) { self.value = value }
    /// A literal (a test's `after: 0`); an integer variable never becomes a cursor unnamed.
    package init(integerLiteral value: Int64) { self.value = value }

    /// Before every row.
    package static let start = RelayCursor(0)

    /// Where a row kept from a store a device no longer trusts goes when it reads
    /// the store from its start again: below `start`, so it neither collides with
    /// nor follows a cursor the store hands out next (the vault moves them all alike).
    package func lowered(by shift: Int64) -> RelayCursor { RelayCursor(value - shift) }
}
