import KeyVaultRelay

extension RelayServer {
    /// Why a run could not go on, as its exit status tells it (docs/RELAY.md, "Exit status").
    package enum Failure: Sendable {
        /// A setting is malformed or names a file that does not load (`StartError`).
        case setting
        /// The store's schema lacks migrations this build has (`SchemaRefusal.behind`).
        case schemaBehind
        /// The store's schema holds migrations this build does not know (`SchemaRefusal.ahead`).
        case schemaAhead
        /// Anything else: the store unreachable, an address taken.
        case other

        package init(_ error: any Error) {
            switch error {
            case is StartError: self = .setting
            case let refusal as SchemaRefusal:
                switch refusal {
                case .behind: self = .schemaBehind
                case .ahead: self = .schemaAhead
                }
            default: self = .other
            }
        }
    }
}
