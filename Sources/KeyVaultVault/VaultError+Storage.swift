import GRDB
package import KeyVaultAccount

extension VaultError {
    /// Words for a failure of the storage under the vault (a full disk, a
    /// read-only or failing file system); nil for any other error. Such a
    /// failure changes nothing: the transaction it hit is rolled back.
    package static func storageFailure(_ error: any Error) -> String? {
        guard let error = error as? DatabaseError else { return nil }
        switch error.resultCode.primaryResultCode {
        case .SQLITE_FULL: return "the disk holding this device's vault is full"
        case .SQLITE_READONLY: return "this device's vault is on a read-only file system"
        case .SQLITE_IOERR, .SQLITE_CANTOPEN: return "this device's vault could not be read or written (a storage error)"
        default: return nil
        }
    }
}
