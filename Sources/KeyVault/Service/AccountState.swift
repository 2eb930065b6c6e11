import Foundation

/// What the daemon holds in memory for one account: the vault's facts, and
/// while unlocked the KEK and the unwrapped keys. Locking drops the KEK and,
/// for `whenUnlocked` accounts, the keys.
struct AccountState: Sendable {
    var record: AccountRecord
    var generations: [KeyGeneration]
    var items: [StoredItem]
    var kek: SecretKey?
    /// Generation keys readable right now, by generation number.
    var keys: [Int: SecretKey] = [:]

    init(snapshot: AccountSnapshot) {
        record = snapshot.account
        generations = snapshot.generations
        items = snapshot.items
    }

    var isLocked: Bool { kek == nil }

    var snapshot: AccountSnapshot { AccountSnapshot(account: record, generations: generations, items: items) }

    var throttle: UnlockThrottle {
        get { UnlockThrottle(failures: record.failedUnlocks, until: record.backoffUntil) }
        set {
            record.failedUnlocks = newValue.failures
            record.backoffUntil = newValue.until
        }
    }

    func availability(of selector: KeySelector) -> KeyAvailability {
        KeyAvailability.decide(selector: selector, generations: generations, current: record.currentGeneration) { number in
            guard let key = keys[number], let generation = generations.first(where: { $0.number == number }) else { return nil }
            return ReleasedKey(account: record.id, generation: generation, key: key, isCurrent: number == record.currentGeneration)
        }
    }

    /// Unwraps every item under `kek`; throws `authenticationFailed` if the KEK is wrong.
    func unwrapAll(with kek: SecretKey) throws -> [WrapContext: SecureBytes] {
        var out: [WrapContext: SecureBytes] = [:]
        for item in items {
            out[item.context] = try WrappedSecret.unwrap(item.wrapped, under: kek, context: item.context)
        }
        return out
    }

    mutating func lock() {
        kek = nil
        if record.accessibility == .whenUnlocked { keys = [:] }
    }

    mutating func unlock(kek: SecretKey, secrets: [WrapContext: SecureBytes]) throws {
        var keys: [Int: SecretKey] = [:]
        for (context, bytes) in secrets where context.kind == .generationKey {
            keys[context.generation] = try SecretKey(secureBytes: bytes)
        }
        self.kek = kek
        self.keys = keys
    }
}

extension WrapContext: Hashable {
    public func hash(into hasher: inout Hasher) {
        hasher.combine(account)
        hasher.combine(kind)
        hasher.combine(generation)
    }
}
