public import GRDB  // ID16 is public (KeyVaultIDs): its conformances are too
package import KeyVaultProtocol
package import KeyVaultIDs

/// A device or key ID in a SQLite column: its 32 hex characters, as every
/// table since the first migration stores it. A value that is not one reads as NULL.
extension ID16: SQLExpressible, StatementBinding, DatabaseValueConvertible {
    package var databaseValue: DatabaseValue { hex.databaseValue }

    package static func fromDatabaseValue(_ value: DatabaseValue) -> Self? {
        String.fromDatabaseValue(value).flatMap { Self(hex: $0) }
    }
}

/// A relay cursor in a SQLite column: its integer.
extension RelayCursor: SQLExpressible, StatementBinding, DatabaseValueConvertible {
    package var databaseValue: DatabaseValue { value.databaseValue }

    package static func fromDatabaseValue(_ value: DatabaseValue) -> Self? {
        Int64.fromDatabaseValue(value).map { RelayCursor($0) }
    }
}
