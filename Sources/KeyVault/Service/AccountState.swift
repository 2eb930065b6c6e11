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
    /// This device's signing and box keys, while unlocked.
    var identity: DeviceIdentity?
    /// The verified circle log (empty for an account without a relay).
    var circle: CircleState
    /// This device's own request, while it waits to be approved.
    var enrollment: EnrollmentRequest?
    /// Requests from new devices that this (trusted) device may approve.
    var requests: [String: EnrollmentRequest] = [:]
    var approvalFailures: [String: Int]
    /// New device: its pairing secret, the challenge it answers, the code it shows.
    var pairingSecret: [UInt8]?
    var chosenChallenge: EnrollmentChallenge?
    var revealed = false
    var pairingCode: String?
    /// Trusted device: challenges seen from members (by challenge hash), the
    /// requests this device challenged, and the reveals received (by device).
    var challenges: [String: EnrollmentChallenge] = [:]
    var challenged: Set<String> = []
    var reveals: [String: EnrollmentReveal] = [:]
    /// Generations this device announced and will promote once acknowledged.
    var announcedHere: Set<Int> = []
    /// Generations each device has acknowledged, and when it was last heard from.
    var acks: [String: (generations: [Int: Date], lastSeen: Date)] = [:]

    init(snapshot: AccountSnapshot) {
        record = snapshot.account
        generations = snapshot.generations
        items = snapshot.items
        approvalFailures = snapshot.approvalFailures
        circle = CircleState(account: snapshot.account.id)
        for bytes in snapshot.circleLog {
            // These entries were verified before they were stored; a vault that
            // no longer verifies is left with the prefix that does.
            guard let entry = try? LogEntry.decode(bytes), (try? circle.apply(entry)) != nil else { break }
        }
        enrollment = snapshot.enrollment.flatMap { try? EnrollmentRequest.decode($0) }
        pairingSecret = snapshot.pairingSecret
    }

    var deviceID: String { record.deviceID }

    var membership: KeyAvailability.Membership {
        if let member = circle.members[deviceID] {
            return member.revoked ? .revoked : .member(since: Date(timeIntervalSince1970: Double(member.joinedAt) / 1000))
        }
        if let enrollment { return .awaitingApproval(since: enrollment.requestedDate) }
        return .member(since: record.createdAt)
    }

    /// Generations this device knows of. With a circle, exactly those it announced
    /// (a key stored here but not announced is not served); without one, those held.
    var knownGenerations: [KeyGeneration] {
        if circle.isEmpty { return generations.sorted { $0.number < $1.number } }
        return circle.generations.map { announced in
            KeyGeneration(number: announced.generation, keyID: announced.keyID, createdAt: announced.createdAt,
                          state: circle.destroyed ? .destroyed : generations.first { $0.number == announced.generation }?.state ?? .active)
        }.sorted { $0.number < $1.number }
    }

    /// The key held for a generation, if it is the key the circle announced under that number.
    func heldKey(_ number: Int) -> SecretKey? {
        guard let key = keys[number] else { return nil }
        if circle.isEmpty { return key }
        guard let announced = circle.announced(number), generations.first(where: { $0.number == number })?.keyID == announced.keyID else { return nil }
        return key
    }

    var currentGeneration: Int? { circle.currentGeneration ?? (record.currentGeneration > 0 ? record.currentGeneration : nil) }

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
        let known = knownGenerations
        let current = currentGeneration
        return KeyAvailability.decide(selector: selector, generations: known, current: current, isLocked: isLocked, membership: membership) { number in
            guard let key = heldKey(number), let generation = known.first(where: { $0.number == number }) else { return nil }
            return ReleasedKey(account: record.id, generation: generation, key: key, isCurrent: number == current)
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
        identity = nil
        if record.accessibility == .whenUnlocked { keys = [:] }
    }

    mutating func unlock(kek: SecretKey, secrets: [WrapContext: SecureBytes]) throws {
        var keys: [Int: SecretKey] = [:]
        for (context, bytes) in secrets where context.kind == .generationKey {
            keys[context.generation] = try SecretKey(secureBytes: bytes)
        }
        let seed = secrets.first { $0.key.kind == .deviceSigningKey }?.value
        let box = secrets.first { $0.key.kind == .deviceBoxKey }?.value
        if let seed, let box {
            identity = DeviceIdentity(signing: try SigningKey(seed: seed), box: try BoxSecretKey(secret: box))
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
