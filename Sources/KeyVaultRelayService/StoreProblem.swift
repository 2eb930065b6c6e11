import KeyVaultProtocol
import KeyVaultRelayStore

/// A store's failure in the relay service's own words. The protocol's errors
/// speak for a device, to which the relay is what failed; here the service is
/// the relay, and what failed is its store.
enum StoreProblem {
    static func describe(_ error: any Error) -> String {
        switch error as? RelayError {
        case .unreachable(let why)?: return "the store is unreachable: \(why)"
        case .badAddress(let why)?: return "bad --store: \(why)"
        case .logSeqTaken?, .identity?, .refused?, .needsUnlock?, .storeRefused?, .nonceSpent?, nil:
            return PostgresRelay.reason(error)
        }
    }
}
