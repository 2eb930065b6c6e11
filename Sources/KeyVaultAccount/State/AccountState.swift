import Foundation
package import KeyVaultCrypto
package import KeyVaultProtocol

/// What the daemon holds in memory for one account: the vault's facts, and
/// while unlocked the KEK and the unwrapped keys. Locking drops the KEK and,
/// for `whenUnlocked` accounts, the keys.
package struct AccountState: Sendable {
    package internal(set) var record: AccountRecord
    package internal(set) var generations: [KeyGeneration]
    package internal(set) var items: [StoredItem]
    package internal(set) var kek: SecretKey?
    /// Generation keys readable right now, by key ID.
    package internal(set) var keys: [KeyID: SecretKey] = [:]
    /// This device's signing and box keys, while unlocked.
    package internal(set) var identity: DeviceIdentity?
    /// The verified circle log (empty for an account without a relay), with
    /// this device's own entries not yet on the relay at its end.
    package internal(set) var circle: CircleState
    /// How many leading entries of `circle` the relay is known to hold.
    package internal(set) var logConfirmed: Int
    /// Shares this device owes the relay.
    package internal(set) var owedDeliveries: Set<OwedDelivery>
    /// Enrollment: this device's own request while it joins, or the requests it answers.
    package internal(set) var enrollment: Enrollment
    /// A joining device's pairing key, wrapped under the KEK, once it confirmed an exchange:
    /// opened at unlock so an approval that arrives after a restart still authenticates.
    package internal(set) var wrappedPairingKey: [UInt8]?
    /// Locked or not, and the unlock back-off.
    package internal(set) var locking: Locking
    /// Rotations this device announced and will promote, and what each device acknowledged.
    package internal(set) var promotions: Promotions
    /// The last relay cursor read for this account, and how many rows were read
    /// since the vault last kept it (it is kept with every kept record, and every
    /// so many rows: reading a row twice changes nothing).
    package internal(set) var relayCursor: RelayCursor
    package internal(set) var rowsSinceStoredCursor = 0
    /// How many times reading started again from the relay's start (`restartReading`): a page
    /// read before the last restart is not taken as a step past rows not read since.
    package internal(set) var readingRestarts = 0
    /// What the vault kept of the relay, until it is replayed at start.
    package internal(set) var notesToReplay: [RelayNote]
    /// Shares for this device that arrived while it was locked, by relay cursor.
    package internal(set) var keptShares: [RelayCursor: [UInt8]] = [:]

    package init(snapshot: AccountSnapshot) {
        record = snapshot.account
        generations = snapshot.generations
        items = snapshot.items
        circle = CircleState(account: snapshot.account.id)
        for bytes in snapshot.circleLog {
            // These entries were verified before they were stored; a vault that
            // no longer verifies is left with the prefix that does.
            guard let entry = try? LogEntry.decode(bytes), (try? circle.apply(entry)) != nil else { break }
        }
        // A device whose request is still in the vault has joined if its circle trusts it and it
        // holds a key (it took shares only once its approval was authenticated); otherwise its
        // exchange, held in memory only, ended with the last run: it enrolls again for a new code.
        let me = snapshot.account.deviceID
        let joining = snapshot.enrollment != nil && !(circle.isTrusted(me) && !snapshot.generations.isEmpty)
        enrollment = Enrollment(joining: joining, ownRequest: joining ? snapshot.enrollment.flatMap { try? PairingRequest.decode($0) } : nil,
                                since: snapshot.account.createdAt, dismissed: snapshot.dismissedRequests)
        wrappedPairingKey = joining ? snapshot.pairingSecret : nil
        logConfirmed = min(snapshot.logConfirmed, circle.entries.count)
        owedDeliveries = Set(snapshot.owedDeliveries)
        promotions = Promotions(deadlines: snapshot.promotionDeadlines)
        locking = Locking(throttle: UnlockThrottle(failures: snapshot.account.failedUnlocks, until: snapshot.account.backoffUntil),
                          accessibility: snapshot.account.accessibility)
        relayCursor = snapshot.relayCursor
        notesToReplay = snapshot.relayNotes
    }

    /// Takes a verified circle; requests from devices now in it are answered.
    mutating func setCircle(_ verified: CircleState) {
        record.setCurrent(currentKey(after: verified))
        circle = verified
        enrollment.circleChanged(verified)
    }

    /// The key `keys/current` answers once `circle` is the log: the log's current
    /// key, or (no circle yet) the one the vault names.
    package func currentKey(after circle: CircleState) -> CurrentKey {
        circle.current.map { CurrentKey(generation: $0.generation, keyID: $0.keyID) } ?? record.currentKey
    }

    /// This device's entries that the relay does not hold yet.
    package var unconfirmedEntries: ArraySlice<LogEntry> { circle.entries[logConfirmed...] }

    package var deviceID: DeviceID { record.deviceID }

    /// Whether the account's genesis is this device's and not yet on the relay:
    /// a founding in progress, or one a crash or an unreachable relay interrupted.
    package var isFounding: Bool { logConfirmed == 0 && circle.entries.first?.signer == deviceID }

    /// Whether the circle was founded with the account (its genesis signed when its first key
    /// was made), not later by a device that held the account on its own (PROTOCOL.md, "Founding later").
    package var foundedAtCreation: Bool {
        guard let first = circle.entries.first, case .genesis(_, _, _, let keyCreatedAt) = first.body else { return false }
        return first.createdAt == keyCreatedAt
    }

    /// Where the account stands (`AccountPhase`), from its log, what the relay holds of it and its enrollment.
    package var phase: AccountPhase {
        // Before its approval is authentic a joining device trusts nothing of the circle it was
        // shown, a destroy entry included; a founding one has not seen another's; a revoked one
        // hears nothing after its removal. Only then does a destroy decide.
        if enrollment.isJoining {
            switch enrollment.progress {
            case .approved: break
            case .failed: return .joining(since: enrollment.joiningSince, failed: true)
            case .awaitingResponse, .confirmed: return .joining(since: enrollment.joiningSince, failed: false)
            }
        }
        // Its own genesis, not yet on the relay (a creation in progress, or interrupted and not
        // completed yet): its keys wait until the relay has taken it.
        // A circle founded later holds keys the device served before: they stay readable meanwhile.
        if isFounding && foundedAtCreation { return .founding(since: record.createdAt) }
        let member = circle.members[deviceID]
        if member?.revoked == true { return .revoked }
        if circle.destroyed { return .destroyed }
        return .member(since: member.map { Millis.date($0.joinedAt) } ?? record.createdAt)
    }

    /// Generations this device knows of, in the agreed order. With a circle,
    /// exactly those announced (a key stored here but not announced is not
    /// served); without one, those held.
    package var knownGenerations: [KeyGeneration] {
        if circle.isEmpty { return generations.sorted { $0.precedes($1) } }
        // Linear in the generations: a publish derives this twice (`readModel`), however many the account has.
        let stored = Dictionary(generations.map { ($0.keyID, $0.state) }, uniquingKeysWith: { first, _ in first })
        return circle.generations.map { announced in
            KeyGeneration(number: announced.generation, keyID: announced.keyID, createdAt: announced.createdAt,
                          state: circle.destroyed ? .destroyed : stored[announced.keyID] ?? .active)
        }
    }

    /// Whether keys may be in memory now: unlocked, or `afterFirstUnlock`
    /// (whose keys stay after a lock, as on Apple's platforms).
    package var mayHoldKeys: Bool { locking.mayHoldKeys }

    /// The key held under a key ID, if the circle announced it (or there is no
    /// circle). A `whenUnlocked` account that is locked holds none, whatever
    /// memory says: the read side keeps the rule even if a writer slipped.
    package func heldKey(_ keyID: KeyID) -> SecretKey? {
        guard mayHoldKeys, let key = keys[keyID] else { return nil }
        if circle.isEmpty { return key }
        return circle.announced(keyID: keyID) == nil ? nil : key
    }

    /// The current key's ID: the circle's, or on a device without one, the vault's.
    package var currentKeyID: KeyID? {
        if !circle.isEmpty { return circle.current?.keyID }
        return generations.last { $0.number == record.currentGeneration }?.keyID
    }

    package var currentGeneration: Generation? { circle.currentGeneration ?? record.currentGeneration }

    package var isLocked: Bool { !locking.isUnlocked }

    package var snapshot: AccountSnapshot { AccountSnapshot(account: record, generations: generations, items: items) }

    /// Takes the back-off `Locking` decided, as the vault now holds it.
    mutating func take(_ locking: Locking) {
        self.locking = locking
        record.failedUnlocks = locking.throttle.failures
        record.backoffUntil = locking.throttle.until
    }

    package func availability(of selector: KeySelector) -> KeyAvailability {
        let current = currentKeyID
        return KeyAvailability.decide(selector: selector, generations: knownGenerations, current: current, isLocked: isLocked, phase: phase) { generation in
            heldKey(generation.keyID).map { ReleasedKey(account: record.id, generation: generation, key: $0, isCurrent: generation.keyID == current) }
        }
    }

    /// Unwraps every item under `kek`; throws `authenticationFailed` if the KEK is wrong.
    package func unwrapAll(with kek: SecretKey) throws -> [ItemSlot: SecureBytes] {
        var out: [ItemSlot: SecureBytes] = [:]
        for item in items {
            out[item.slot] = try WrappedSecret.unwrap(item.wrapped, under: kek, context: item.context)
        }
        return out
    }

    /// Whether `kek` opens any stored item, in its own slot or in another's.
    /// When it does, the passphrase was right and whatever failed is damage (a
    /// blob altered, or moved to another slot), not a wrong guess.
    package func kekOpensAnyItem(_ kek: SecretKey) -> Bool {
        let contexts = items.map(\.context)
        return items.contains { item in
            contexts.contains { (try? WrappedSecret.unwrap(item.wrapped, under: kek, context: $0)) != nil }
        }
    }

    /// Locks; answers what `Locking` decided, for the caller to announce.
    mutating func lock() -> [Locking.Effect] {
        let effects = locking.lock()
        for effect in effects {
            switch effect {
            case .forgetKEK:
                kek = nil
                identity = nil
            case .forgetKeys: keys = [:]
            case .persistThrottle, .announce: break
            }
        }
        return effects
    }

    /// Installs the KEK and the unwrapped secrets; answers what `Locking`
    /// decided (a back-off to clear in the vault, a wake-up).
    mutating func unlock(kek: SecretKey, secrets: [ItemSlot: SecureBytes]) throws -> [Locking.Effect] {
        var keys: [KeyID: SecretKey] = [:]
        for (slot, bytes) in secrets where slot.kind == .generationKey {
            let key = try SecretKey(secureBytes: bytes)
            // Two keys may share a generation number (and so an AAD): the key ID tells a swapped blob.
            guard let keyID = slot.keyID, KeyID(of: key) == keyID else {
                throw VaultError.corrupt("the key stored for generation \(slot.generation) does not match its key ID")
            }
            keys[keyID] = key
        }
        let seed = secrets.first { $0.key.kind == .deviceSigningKey }?.value
        let box = secrets.first { $0.key.kind == .deviceBoxKey }?.value
        if let seed, let box {
            identity = DeviceIdentity(signing: try SigningKey(seed: seed), box: try BoxSecretKey(secret: box))
        }
        self.kek = kek
        self.keys = keys
        if let wrapped = wrappedPairingKey,
           let isk = try? WrappedSecret.unwrap(wrapped, under: kek, context: WrapContext(account: record.id, kind: .pairingKey, generation: 0)),
           isk.count == CPace.sessionKeyByteCount {
            enrollment.restore(sessionKey: CPace.SessionKey(bytes: isk))
        }
        var locking = self.locking
        let effects = locking.unlocked()
        take(locking)
        return effects
    }
}
