
/// Failures of the vault itself (not of a caller's input).
package enum VaultError: Error, Sendable, Equatable, CustomStringConvertible {
    case unsupportedWrapVersion
    case accountExists
    case noSuchAccount
    case dataDirectory(String)
    case corrupt(String)

    package var description: String {
        switch self {
        case .unsupportedWrapVersion: return "a wrapped secret has an unknown format version"
        case .accountExists: return "the account already exists on this device"
        case .noSuchAccount: return "no such account on this device"
        case .dataDirectory(let why): return "data directory: \(why)"
        case .corrupt(let why): return "the vault is inconsistent: \(why)"
        }
    }
}
