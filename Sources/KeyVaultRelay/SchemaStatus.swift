/// Where a relay store's schema stands against the migrations this build knows:
/// what `keyvault-relay migrate` would apply, and whether a start may serve it.
package struct SchemaStatus: Sendable, Equatable {
    /// This build's migrations, in the order they run.
    package let known: [String]
    /// The migrations the store records as applied (by this build or any other).
    package let applied: Set<String>

    package init(known: [String], applied: Set<String>) {
        self.known = known
        self.applied = applied
    }

    /// Nothing applied: a brand-new store, with nothing in it anyone relies on.
    package var isEmpty: Bool { applied.isEmpty }
    /// What this build would apply, in order.
    package var missing: [String] { known.filter { !applied.contains($0) } }
    /// Applied by a newer build: this one does not know what they changed.
    package var unknown: [String] { applied.subtracting(known).sorted() }

    /// The migrations to apply before serving the store under `rule` (none: it is current),
    /// or why it is not served.
    package func toApply(under rule: SchemaRule) throws(SchemaRefusal) -> [String] {
        guard unknown.isEmpty else { throw .ahead(unknown: unknown) }
        if case .refuseBehind = rule, !isEmpty, !missing.isEmpty { throw .behind(missing: missing) }
        return missing
    }
}

/// What opening the relay service's store does about a schema behind this build's
/// (docs/RELAY.md, "The store's schema").
package enum SchemaRule: Sendable {
    /// Apply what it lacks: `keyvault-relay migrate`, or a start told to (`--migrate`).
    case migrate
    /// Refuse it, unless it is empty: a brand-new store holds nothing anyone relies on,
    /// so its schema is made; a store in use changes only when an operator says so.
    case refuseBehind
}

/// A store whose schema this build does not serve.
package enum SchemaRefusal: Error, CustomStringConvertible, Equatable {
    /// Migrations this build has and the store lacks.
    case behind(missing: [String])
    /// Migrations a newer build applied, which this one does not know.
    case ahead(unknown: [String])

    package var description: String {
        switch self {
        case .behind(let missing):
            return "the store's schema is behind this keyvault-relay (it lacks \(missing.joined(separator: ", "))): "
                + "run `keyvault-relay migrate` (as a role that may create tables), or start it with --migrate"
        case .ahead(let unknown):
            return "the store's schema is newer than this keyvault-relay (it holds \(unknown.joined(separator: ", ")), "
                + "which this version does not know): run the version that migrated it, or a later one"
        }
    }
}
