/// What a caller may do. The names are the policy's vocabulary.
package enum Permission: String, Sendable, CaseIterable, Comparable {
    case health, status
    case create, unlock, lock, passphrase
    case read, wait, subscribe, seal
    case enroll, approve, revoke, rotate
    case export, delete

    package static func < (a: Permission, b: Permission) -> Bool { a.rawValue < b.rawValue }
}
