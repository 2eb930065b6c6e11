package import FoundationEssentials
package import KeyVaultCrypto

/// What an account's verified circle log says: who is trusted, who was
/// revoked, which generations exist, and the head. A pure value: `apply`
/// verifies one entry against the state before it and returns the state
/// after it, or throws and leaves nothing changed.
package struct CircleState: Sendable, Equatable {
    package struct Member: Sendable, Equatable {
        package var keys: DeviceKeys
        package var joinedAt: UInt64
        package var revoked: Bool
        /// A recovery kit's member (a `recovery` entry): it receives shares, is never
        /// waited on for an acknowledgement, and may sign only an `approve`.
        package var isRecovery = false
    }

    package struct Announced: Sendable, Equatable {
        package var generation: Generation
        package var keyID: KeyID
        package var createdAt: Date

        /// Generation number, then key ID: the one order every device agrees on.
        package func precedes(_ other: Announced) -> Bool { (generation, keyID) < (other.generation, other.keyID) }
    }

    package private(set) var account: AccountID
    package private(set) var entries: [LogEntry] = []
    package private(set) var members: [DeviceID: Member] = [:]
    /// Announced generations, in the agreed order. Two devices that rotated
    /// while apart may announce the same number; key IDs never repeat.
    package private(set) var generations: [Announced] = []
    /// Key IDs promoted to current, in log order (genesis promotes generation 1).
    package private(set) var promoted: [KeyID] = []
    /// Indexes of the two lists above, so a lookup costs the same however long the log.
    private var announcedByKeyID: [KeyID: Announced] = [:]
    private var promotedSet: Set<KeyID> = []
    /// Each verified entry's position by its hash: what a pairing request or an approval names,
    /// found without hashing the log again (a relay chooses how many of those arrive).
    private var positionByHash: [LogHash: Int] = [:]
    /// A destroy entry was verified: every key of the account is to be shredded.
    package private(set) var destroyed = false

    package init(account: AccountID) { self.account = account }

    /// The state after the first `count` entries (each verified again).
    package func prefix(_ count: Int) throws(ProtocolError) -> CircleState {
        var out = CircleState(account: account)
        for entry in entries.prefix(count) { try out.apply(entry) }
        return out
    }

    package private(set) var headHash: LogHash = .zero
    package var nextSeq: LogSeq { LogSeq(index: entries.count) }
    package var isEmpty: Bool { entries.isEmpty }

    /// Whether `deviceID` is a member not revoked: a device, or a recovery kit's member.
    package func isTrusted(_ deviceID: DeviceID) -> Bool { members[deviceID].map { !$0.revoked } ?? false }
    /// Trusted devices: the members that hold keys, acknowledge them and act (no recovery kit's member).
    package var trustedDevices: [DeviceID: Member] { members.filter { !$0.value.revoked && !$0.value.isRecovery } }
    /// Every trusted member a new generation is shared with: the devices and the recovery kits' members.
    package var shareRecipients: [DeviceID: Member] { members.filter { !$0.value.revoked } }
    /// Whether `deviceID` is a trusted device (not a recovery kit's member).
    package func isTrustedDevice(_ deviceID: DeviceID) -> Bool { members[deviceID].map { !$0.revoked && !$0.isRecovery } ?? false }

    /// The last promoted generation in the agreed order: every device that has
    /// verified the same entries agrees on it, whatever order they arrived in.
    package var current: Announced? {
        generations.last { promotedSet.contains($0.keyID) }
    }

    package var currentGeneration: Generation? { current?.generation }

    /// The highest announced generation number (promoted or not).
    package var latestGeneration: Generation? { generations.last?.generation }

    /// The last generation in the agreed order that carries `number`.
    package func announced(_ number: Generation) -> Announced? { generations.last { $0.generation == number } }

    package func announced(keyID: KeyID) -> Announced? {
        announcedByKeyID[keyID]
    }

    package func isPromoted(keyID: KeyID) -> Bool { promotedSet.contains(keyID) }

    /// The entry that would come next on this log's head, signed by `signer`.
    package func nextEntry(_ body: LogEntry.Body, signer: SigningKey, signerID: DeviceID, at date: Date) -> LogEntry {
        LogEntry.make(account: account, seq: nextSeq, previousHash: headHash, signer: signer, signerID: signerID, body: body, at: date)
    }

    /// Whether `hash` names a verified entry (the zero hash names none).
    package func contains(hash: LogHash) -> Bool { positionByHash[hash] != nil }

    /// The verified entry whose hash is `hash`.
    package func entry(hash: LogHash) -> LogEntry? { positionByHash[hash].map { entries[$0] } }

    package func approval(of deviceID: DeviceID) -> LogEntry? {
        entries.first { if case .approve(let d, _) = $0.body { return d.deviceID == deviceID } else { return false } }
    }

    /// What a revoke still owes. The device a revoke removed held the key that
    /// was current then; until a generation announced after the revoke is current,
    /// it still does.
    package enum RevokeDebt: Sendable, Equatable {
        /// No generation was announced after the revoke: rotate, and promote at once.
        case rotate(revoked: DeviceID)
        /// This device announced one after the revoke and has not promoted it: promote it now.
        case promote(keyID: KeyID)
    }

    /// What the last revoke `me` signed still owes, read from the log alone (so a
    /// crash between the revoke and its rotation, or between announce and promote,
    /// leaves the debt where a restart finds it): nil once a generation announced
    /// after that revoke is current, or when `me` is no longer trusted.
    package func revokeDebt(signedBy me: DeviceID) -> RevokeDebt? {
        guard isTrusted(me), !destroyed,
              let revoke = entries.lastIndex(where: { if case .revoke = $0.body { $0.signer == me } else { false } }),
              case .revoke(let revoked) = entries[revoke].body else { return nil }
        var mine: KeyID?
        for entry in entries[(revoke + 1)...] {
            guard case .announce(_, let keyID, _) = entry.body else { continue }
            if current?.keyID == keyID { return nil }
            if mine == nil, entry.signer == me, !isPromoted(keyID: keyID) { mine = keyID }
        }
        return mine.map { .promote(keyID: $0) } ?? .rotate(revoked: revoked)
    }

    /// Whether `entry` is in the log already: the same hash at its seq (verified when it was applied).
    package func holds(_ entry: LogEntry) -> Bool {
        entry.seq < nextSeq && entries[entry.seq.index].hash == entry.hash
    }

    /// Verifies `entry` as the next one and applies it. An entry already
    /// verified (same seq, same hash) is a no-op; a different one is a fork.
    /// Every rule is checked before anything changes, and the change is made in
    /// place: applying n entries costs O(n), never a copy of the state per entry.
    package mutating func apply(_ entry: LogEntry) throws(ProtocolError) {
        guard entry.account == account else { throw .invalid("an entry for another account") }
        if entry.seq < nextSeq {
            guard holds(entry) else { throw .fork(seq: entry.seq) }
            return
        }
        guard entry.seq == nextSeq else { throw .gap(expected: nextSeq, got: entry.seq) }
        guard !destroyed else { throw .invalid("an entry after the account was destroyed") }
        guard entry.previousHash == headHash else { throw .fork(seq: entry.seq) }
        switch entry.body {
        case .genesis(let device, let generation, let keyID, let keyCreatedAt):
            guard entry.seq == 0 else { throw .invalid("genesis after entry 0") }
            guard entry.signer == device.deviceID, device.signing.isValidSignature(entry.signature, for: entry.signedBytes) else {
                throw .badSignature("the genesis entry")
            }
            guard generation == 1 else { throw .invalid("genesis must announce generation 1") }
            members[device.deviceID] = Member(keys: device, joinedAt: entry.createdAt, revoked: false)
            insert(Announced(generation: 1, keyID: keyID, createdAt: Millis.date(keyCreatedAt)))
            promoted.append(keyID)
            promotedSet.insert(keyID)
        case .approve, .recovery, .revoke, .announce, .promote, .destroy:
            guard entry.seq > .genesis else { throw .invalid("entry 0 must be a genesis") }
            guard let signer = members[entry.signer], !signer.revoked else { throw .untrustedSigner(entry.signer) }
            guard signer.keys.signing.isValidSignature(entry.signature, for: entry.signedBytes) else { throw .badSignature("entry \(entry.seq)") }
            // A recovery kit's member re-joins the account from a new device, and does nothing else.
            if signer.isRecovery, entry.body.kind != "approve" { throw .invalid("a recovery kit's member may sign only an approve") }
            switch entry.body {
            case .approve(let device, _):
                guard members[device.deviceID] == nil else { throw .invalid("device \(device.deviceID) is already in the circle") }
                members[device.deviceID] = Member(keys: device, joinedAt: entry.createdAt, revoked: false)
            case .recovery(let device):
                guard members[device.deviceID] == nil else { throw .invalid("device \(device.deviceID) is already in the circle") }
                members[device.deviceID] = Member(keys: device, joinedAt: entry.createdAt, revoked: false, isRecovery: true)
            case .revoke(let deviceID):
                guard let member = members[deviceID], !member.revoked else { throw .invalid("revoking a device that is not trusted") }
                // A circle never empties itself of devices: a recovery kit's member alone acts for no one.
                guard member.isRecovery || trustedDeviceCount > 1 else { throw .invalid("revoking the last device") }
                members[deviceID]?.revoked = true
            case .announce(let generation, let keyID, let keyCreatedAt):
                // A key ID names one key: announcing it again is refused. A number may repeat
                // (two devices rotated while apart); the key ID orders the two.
                guard announcedByKeyID[keyID] == nil else {
                    throw .invalid("the key \(keyID) is already announced")
                }
                // At most one past the highest announced (the same number again: a device that rotated
                // apart). So a member cannot jump the numbers to the end and pin the current key: the
                // rotation after a revoke always has a number left above anything announced before it.
                guard generation.value <= (latestGeneration?.value ?? 0) + 1 else {
                    throw .invalid("generation \(generation) skips past the next one, \((latestGeneration?.value ?? 0) + 1)")
                }
                insert(Announced(generation: generation, keyID: keyID, createdAt: Millis.date(keyCreatedAt)))
            case .promote(let generation, let keyID):
                guard announcedByKeyID[keyID]?.generation == generation else {
                    throw .invalid("promoting generation \(generation), which was not announced with that key")
                }
                guard !promotedSet.contains(keyID) else { throw .invalid("generation \(generation) is already promoted") }
                promoted.append(keyID)
                promotedSet.insert(keyID)
            case .destroy:
                destroyed = true
            case .genesis:
                preconditionFailure("handled above")
            }
        }
        let hash = entry.hash
        positionByHash[hash] = entries.count
        headHash = hash
        entries.append(entry)
    }

    /// Trusted devices, counted without building a dictionary.
    private var trustedDeviceCount: Int { members.values.reduce(0) { $0 + ($1.revoked || $1.isRecovery ? 0 : 1) } }

    /// Keeps the agreed order; an announce of the highest number so far (the usual case) appends.
    private mutating func insert(_ announced: Announced) {
        announcedByKeyID[announced.keyID] = announced
        if let last = generations.last, !announced.precedes(last) { generations.append(announced); return }
        let index = generations.firstIndex { announced.precedes($0) } ?? generations.endIndex
        generations.insert(announced, at: index)
    }
}
