import Foundation

/// The answer to "may I have this key?", as a pure value. The service decides
/// it from what the vault holds and whether the account is unlocked; the API
/// renders it once.
public enum KeyAvailability: Sendable {
    case ready(ReleasedKey)
    case locked
    case unknown(String)
    case destroyed

    /// Decides a read from the account's state. `held` is the key if this
    /// device holds it readable right now.
    public static func decide(
        selector: KeySelector, generations: [KeyGeneration], current: Int?,
        isReadable: (Int) -> ReleasedKey?
    ) -> KeyAvailability {
        let target: KeyGeneration?
        switch selector {
        case .current:
            target = current.flatMap { number in generations.first { $0.number == number } }
        case .generation(let number):
            target = generations.first { $0.number == number }
        case .keyID(let id):
            target = generations.first { $0.keyID == id }
        }
        guard let target else {
            switch selector {
            case .current: return .unknown("the account has no current key")
            case .generation(let n): return .unknown("generation \(n) has never been announced for this account")
            case .keyID: return .unknown("no generation of this account has that key ID")
            }
        }
        switch target.state {
        case .destroyed: return .destroyed
        case .active:
            if let key = isReadable(target.number) { return .ready(key) }
            return .locked
        }
    }
}

/// A key on its way out to an authorised caller.
public struct ReleasedKey: Sendable {
    public var account: AccountID
    public var generation: KeyGeneration
    public var key: SecretKey
    public var isCurrent: Bool

    public init(account: AccountID, generation: KeyGeneration, key: SecretKey, isCurrent: Bool) {
        self.account = account
        self.generation = generation
        self.key = key
        self.isCurrent = isCurrent
    }
}
