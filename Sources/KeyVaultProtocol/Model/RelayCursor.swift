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
}
