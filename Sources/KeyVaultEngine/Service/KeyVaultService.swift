import Foundation
package import KeyVaultPolicy
package import Logging
import Synchronization
package import KeyVaultCrypto
package import KeyVaultProtocol
package import KeyVaultAccount
package import KeyVaultVault
package import KeyVaultRelay

/// The daemon's core, below the HTTP layer: accounts, locking, and key
/// availability. Every change to an account is a job of its owner
/// (`AccountOwners`): one at a time, vault first, then memory. Reads are
/// answered from the state the jobs publish, under a lock and without waiting.
package final class KeyVaultService: Sendable {
    let vault: Vault
    package let policy: PolicyStore
    let logger: Logger
    /// The engine's time: the system's in the daemon, a test's in the in-process harness.
    let clock: any EngineClock
    var now: @Sendable () -> Date { { [clock] in clock.now } }
    /// Each account's owner: its jobs, and the state they last published. Read
    /// anywhere; written only by the account's own jobs (`update`, `install`).
    package let owners = AccountOwners()
    /// The CPace states of pairing exchanges under way (memory only).
    let pairings: PairingExchanges
    /// nil: a device on its own, with no relay (no enrollment or propagation).
    let relay: (any Relay)?
    package let hub: WaitingHub
    let relayHealth = Mutex(RelayHealth())
    /// Audits of the relay begun (`RelayAudit`), each after it was opened: a publish outside the line
    /// an audit began during does not count its write as taken (it may have gone to the store replaced).
    let relayAudits = Atomic<UInt64>(0)
    /// Wrong kit passphrases, per caller (uid): an import is throttled like an unlock. Memory only.
    let kitThrottles = Mutex<[UInt32: UnlockThrottle]>([:])
    package var hasRelay: Bool { relay != nil }
    /// Owners in the account directory (`GET /v1/server`).
    package var ownerCount: Int { owners.count }
    /// Follow-ups queued and not ended yet.
    package var followUpsRunning: Int { owners.followUpsRunning }

    /// At a stop, after the server and propagation: the follow-ups queued so far end (at most 5 s, then
    /// they are cancelled; what they owed is in the vault and resumes at the next start).
    package func finishFollowUps() async {
        await owners.finishFollowUps(within: .seconds(5))
    }
    /// Jobs running or waiting in every account's line, and in the longest one (`GET /v1/metrics`).
    package var accountLines: (queued: Int, deepest: Int, publishing: Int) { owners.lineDepths }
    /// Records on their way to the relay outside the accounts' lines (acknowledgements, pairing messages).
    package var recordsSending: Int { owners.recordsSending }
    /// With a relay service: what its requests are signed with, kept in step
    /// with each account's identity (`update`, `install`). nil otherwise.
    let relayCredentials: RelayCredentials?

    package init(vault: Vault, policy: PolicyStore, logger: Logger, relay: (any Relay)? = nil, relayCredentials: RelayCredentials? = nil,
                clock: any EngineClock = SystemClock()) throws {
        self.vault = vault
        self.policy = policy
        self.logger = logger
        self.relay = relay
        self.relayCredentials = relayCredentials
        self.clock = clock
        hub = WaitingHub(owners: owners)
        pairings = PairingExchanges(owners: owners)
        for snapshot in try vault.loadAll() {
            _ = owners.owner(snapshot.account.id).publish(locksAtStart: 0, now: clock.now) { $0 = AccountState(snapshot: snapshot) }
        }
    }

    // MARK: Reads

    /// The hot path: no I/O, one lock.
    package func availability(_ account: AccountID, _ selector: KeySelector) -> KeyAvailability? {
        owners.read(account, { $0.availability(of: selector) })
    }

    /// A key read's answer and whether it should wait for the next change (`AccountState.read`).
    package func read(_ account: AccountID, _ selector: KeySelector) -> KeyRead? {
        owners.read(account, { read($0, selector) })
    }

    /// A key read's answer from `state` (one a waiting read was woken with).
    package func read(_ state: AccountState, _ selector: KeySelector) -> KeyRead {
        state.read(selector, withRelay: relay != nil)
    }

    package func status() -> [AccountStatus] {
        // Sorted by ID without copying the states.
        owners.held.compactMap { $0.read(AccountStatus.init) }
    }

    // MARK: Account lifecycle

    /// Genesis of an account on its first device: identity, generation 1, all
    /// wrapped under a KEK from the passphrase. The account starts unlocked.
    package func createAccount(_ id: AccountID, passphrase: SecureBytes, accessibility: Accessibility, deviceName: String = "first device",
                              identityToken: String? = nil) async throws -> AccountStatus {
        try await found(id, passphrase: passphrase, accessibility: accessibility, deviceName: deviceName, restoring: nil, identityToken: identityToken)
    }

    /// Restores an account from a recovery kit on this device. A version 2 kit whose
    /// member the relay's circle for the account still trusts re-joins that circle:
    /// the member approves this device (PROTOCOL.md, "Recovery"), and the keys shared
    /// to the member since the kit was made come with it. Otherwise (a version 1 kit,
    /// no relay, no circle there) the account is restored as a device on its own, which
    /// founds its circle when it meets a relay. `authorize` is asked about the account
    /// the kit restores before any KDF work (the caller's policy scope); it throws to refuse.
    package func importRecoveryKit(_ kit: [UInt8], kitPassphrase: SecureBytes, passphrase: SecureBytes, deviceName: String,
                                  authorize: (AccountID) throws -> Void) async throws -> (status: AccountStatus, note: String) {
        let named = try recoveryKits.checkHeader(kit)
        try authorize(named)
        // A kit passphrase is guessed at the kit's KDF cost: wrong ones back off per caller, as unlocks do.
        let caller = KDFRunner.caller ?? UInt32.max
        if let wait = kitThrottles.withLock({ $0[caller] })?.retryAfter(at: now()) {
            throw Refusal(.throttled, "a wrong kit passphrase was tried from this caller just now; try again in \(wait) s", retryAfterSeconds: wait)
        }
        let contents: RecoveryKit.Contents
        do {
            contents = try await KDFRunner.run { try RecoveryKit.open(kit, passphrase: kitPassphrase) }
            kitThrottles.withLock { _ = $0.removeValue(forKey: caller) }
        } catch CryptoError.authenticationFailed {
            let backoff = policy.current.backoff
            let at = now()
            kitThrottles.withLock { throttles in
                throttles[caller] = (throttles[caller] ?? UnlockThrottle(failures: 0, until: at)).failed(at: at, base: backoff.baseSeconds, max: backoff.maxSeconds)
            }
            throw Refusal(.denied, "wrong kit passphrase, or the kit was changed")
        } catch is ProtocolError {
            throw Refusal.invalid("this is not a keyvaultd recovery kit")
        } catch is InvalidInput {
            throw Refusal.invalid("this is not a keyvaultd recovery kit")
        } catch is CryptoError {
            throw Refusal.invalid("this is not a keyvaultd recovery kit")
        }
        // The header is the AAD: the account it named is the one the kit holds.
        precondition(contents.account == named, "RecoveryKit.open authenticates the header it was checked by")
        guard !contents.keys.isEmpty else { throw Refusal.invalid("the recovery kit holds no key") }
        var rejoining: Founding.Rejoin?
        if let member = contents.member, owners.holding(named) == nil {
            rejoining = try await founding.rejoin(named, member: member)
        }
        let status = try await found(named, passphrase: passphrase, accessibility: .whenUnlocked, deviceName: deviceName,
                                     restoring: contents.keys + (rejoining?.sharedKeys ?? []), rejoining: rejoining)
        return (status, RecoveryKits.importNote(rejoined: rejoining != nil, hasMember: contents.member != nil, hasRelay: relay != nil))
    }

    private func found(_ id: AccountID, passphrase: SecureBytes, accessibility: Accessibility, deviceName: String,
                       restoring: [RecoveryKit.KeptKey]?, rejoining: Founding.Rejoin? = nil, identityToken: String? = nil) async throws -> AccountStatus {
        try await owners.run(id) { [self] in
            if (owners.holding(id) != nil) { throw Refusal.invalid("the account \(id) already exists on this device") }
            let founding = relay != nil && restoring == nil
            if founding { try requireIdentityToken(identityToken, for: "creating an account") }
            let parameters = policy.current.kdf
            let salt = Random.bytes(KDFParameters.saltByteCount)
            let kek = try await KDFRunner.deriveKEK(passphrase: passphrase, salt: salt, parameters: parameters)
            // To the millisecond, as the log and shares carry it: a finer time would read back
            // otherwise from the vault after a restart (its sub-millisecond part rounded through seconds).
            let created = Millis.whole(now())
            let identity = founding ? preparedIdentity(for: id) : DeviceIdentity.generate()
            // A new account starts with generation 1; an imported one with the kit's generations.
            let generated = SecretKey.generate()
            var keys = restoring ?? [RecoveryKit.KeptKey(number: 1, keyID: KeyID(of: generated), createdAt: created, key: generated)]
            // One key per key ID (a kit's key may also have been shared to its member).
            var seen = Set<KeyID>()
            keys = keys.filter { seen.insert($0.keyID).inserted }
            let current = keys.map(\.number).max() ?? .first
            let generations = keys.map { KeyGeneration(number: $0.number, keyID: $0.keyID, createdAt: $0.createdAt, state: .active) }
            // An item's generation is 0 for the device's identity items (docs/FORMAT.md).
            let secrets: [(ItemKind, Int, KeyID?, SecureBytes)] = [
                (.deviceSigningKey, 0, nil, identity.signing.seed),
                (.deviceBoxKey, 0, nil, identity.box.secret),
            ] + keys.map { (.generationKey, $0.number.value, $0.keyID, $0.key.bytes) }
            let items = secrets.map { kind, number, keyID, bytes in
                let attributes = KeychainItem.make(account: id, kind: kind, generation: number, keyID: keyID, accessibility: accessibility, at: created)
                return StoredItem(attributes: attributes, wrapped: WrappedSecret.wrap(bytes, under: kek, context: WrapContext(account: id, kind: kind, generation: number)))
            }
            var record = AccountRecord(
                id: id, createdAt: created, kdf: parameters, salt: salt, accessibility: accessibility,
                deviceID: identity.deviceID, signingPublicKey: identity.signing.publicKey, boxPublicKey: identity.box.publicKey,
                currentGeneration: current, failedUnlocks: 0, backoffUntil: Date(timeIntervalSince1970: 0))
            record.deviceName = deviceName
            // The current key: the newest of those stored, in the agreed order.
            record.currentKeyID = generations.max { $0.precedes($1) }?.keyID
            var snapshot = AccountSnapshot(account: record, generations: generations, items: items)
            if let rejoining {
                // The kit's member approves this device on the circle's head: stored first (unconfirmed), published after.
                let me = DeviceKeys(signing: identity.signing.publicKey, box: identity.box.publicKey, name: deviceName)
                var circle = rejoining.circle
                try circle.apply(circle.nextEntry(.approve(device: me, requestHash: .zero), signer: rejoining.member.signing,
                                                  signerID: rejoining.member.deviceID, at: created))
                snapshot.circleLog = circle.entries.map(\.encoded)
                snapshot.logConfirmed = rejoining.circle.entries.count
                if let current = circle.current { snapshot.account.setCurrent(CurrentKey(generation: current.generation, keyID: current.keyID)) }
            }
            if relay != nil, restoring == nil {
                let body = LogEntry.Body.genesis(
                    device: DeviceKeys(signing: identity.signing.publicKey, box: identity.box.publicKey, name: record.deviceName),
                    generation: 1, keyID: KeyID(of: generated), keyCreatedAt: Millis.of(created))
                // Queued like any entry of this device's: stored first (unconfirmed), published after.
                snapshot.circleLog = [LogEntry.make(account: id, seq: 0, previousHash: .zero, signer: identity.signing,
                                                    signerID: identity.deviceID, body: body, at: created).encoded]
            }
            do {
                try await vault.insert(snapshot)
            } catch VaultError.accountExists {
                throw Refusal.invalid("the account \(id) already exists on this device")
            }
            var state = AccountState(snapshot: snapshot)
            state.handle(.opened(kek: kek, identity: identity, keys: Dictionary(keys.map { ($0.keyID, $0.key) }, uniquingKeysWith: { a, _ in a })),
                         now: now())
            install(id, state)
            if founding {
                // An account that another device already founded on the relay is not founded twice;
                // one the relay did not take now is not kept either (a crash in between is completed
                // at the next start instead: see `publishQueued`).
                relayCredentials?.present(identityToken: identityToken, for: id)
                defer { relayCredentials?.present(identityToken: nil, for: id) }
                switch await publishing.publishQueued(id) {
                case .done, .waitingForUnlock: break
                case .refused(let error):
                    try await publishing.abandonFounding(id, because: "\(error)")
                    throw error
                case .blocked:
                    throw Refusal.invalid("the account \(id) already exists on the relay; join it with enroll")
                case .unreachable:
                    try await publishing.abandonFounding(id, because: "the relay did not take its genesis")
                    throw RelayError.unreachable(await publishing.relayStatus()?.problem ?? "no answer")
                }
                spendIdentity(for: id)
            }
            if rejoining != nil {
                // Stored here first: if the relay does not take it now, it goes out at the next publish or start.
                await publishing.publishQueued(id)
                logger.notice("account restored from its recovery kit and re-joined its circle, approved by the kit's member",
                              metadata: ["account": "\(id)", "device": "\(identity.deviceID)"])
            }
            logger.info("account created", metadata: ["account": "\(id)", "device": "\(identity.deviceID)"])
            return statusOf(id)!
        }
    }

    /// Unlocks at once, not in the account's line (issue 34): a job waiting on the relay or the
    /// vault does not hold an unlock back. Passphrase checks take turns among themselves, so each
    /// sees the back-off the one before it left; the KEK and keys go into the state held when the
    /// KDF ends (`AccountOwner.unlockAtOnce`), and a lock sent meanwhile wins.
    package func unlock(_ id: AccountID, passphrase: SecureBytes) async throws {
        guard let owner = owners.holding(id) else { throw Refusal.unknownAccount(id) }
        let locksBefore = owner.locksAtOnce
        try await checkingPassphrases(owner) {
            let (kek, _) = try await verify(passphrase, for: try existing(id), owner: owner)
            try await install(unlocked: owner, kek: kek, locksBefore: locksBefore)
        }
        logger.info("account unlocked", metadata: ["account": "\(id)"])
        // Shares that arrived while locked are sealed on the relay: take them in now.
        if relay != nil {
            // A follow-up outside the account's line, each step a job of its own and the relay read and
            // written between them (issue 34: a relay that does not answer holds back this work only):
            // entries that needed this device's key to rebase its own after them, then shares, then what
            // waits. Its place is taken now: a rotation, a revoke, an approval or a kit asked for after
            // this unlock waits for it (`caughtUp`), a lock or a read does not.
            owners.catchUpAfterUnlock(id) {
                // A device on its own meets its relay: its account's circle is founded there.
                await self.founding.foundIfAlone(id)
                await self.propagation.readLog(for: id)
                await self.owners.run(id) { await self.propagation.takeKeptShares(for: id) }
                await self.propagation.advanceEnrollments(id)
                // Promotions and rotations a crash or the lock held back.
                await self.rotations.payOwedWork(id)
                await self.publishing.publishOutsideLine(id)
            }
        }
    }

    /// `body` in the account's turn of passphrase checks (`AccountOwner.passphraseChecks`).
    private func checkingPassphrases<T: Sendable>(_ owner: AccountOwner, _ body: () async throws -> T) async throws -> T {
        let ticket = owner.passphraseChecks.take()
        await owner.passphraseChecks.wait(for: ticket)
        defer { owner.passphraseChecks.finish(ticket) }
        return try await body()
    }

    /// Locks at once, not in the account's line (issue 34): a job waiting on the relay or
    /// the vault does not hold a lock back, and cannot undo it (`AccountOwner.lockAtOnce`).
    package func lock(_ id: AccountID) async throws {
        guard let owner = owners.holding(id), let (before, after, effects) = owner.lockAtOnce(now: now()) else { throw Refusal.unknownAccount(id) }
        didPublish(owner, before, after)
        logger.info("account locked", metadata: ["account": "\(id)"])
        for case .announce(let event) in effects { hub.announce(id, event) }
    }

    /// Re-wraps every secret under a KEK from the new passphrase, in one vault
    /// transaction. Leaves the account unlocked.
    package func changePassphrase(_ id: AccountID, old: SecureBytes, new: SecureBytes) async throws {
        try await owners.run(id) { [self] in
            // In the passphrase checks' turn too: no unlock checks the old passphrase against items being re-wrapped.
            try await checkingPassphrases(owners.owner(id)) {
                let state = try existing(id)
                let (oldKEK, secrets) = try await verify(old, for: state, owner: owners.owner(id))
                // Damage found after the vault took the new wrapping would leave the old KEK in memory for new keys.
                do { try state.checkUnlock(kek: oldKEK, secrets: secrets, now: now()) } catch VaultError.corrupt(let why) { throw Refusal.damaged(id, why) }
                let parameters = policy.current.kdf
                let salt = Random.bytes(KDFParameters.saltByteCount)
                let kek = try await KDFRunner.deriveKEK(passphrase: new, salt: salt, parameters: parameters)
                let modified = now()
                let items = state.items.map { item in
                    var item = item
                    item.wrapped = WrappedSecret.wrap(secrets[item.slot]!, under: kek, context: item.context)
                    item.attributes.modificationDate = modified
                    return item
                }
                try await perform(id, .rewrapped(items: items, salt: salt, kdf: parameters), now: modified)
                try await install(unlocked: id, kek: kek, secrets: secrets)
                logger.info("passphrase changed", metadata: ["account": "\(id)"])
            }
        }
    }

    // MARK: Helpers

    /// Hands `event` to the account's machine (at `at`, else the clock's time) and publishes
    /// what it leaves: only from one of the account's own jobs. Answers the machine's effects,
    /// or nil for an account this device does not hold; a refused event changes nothing.
    /// An event for which the machine names a vault write goes through `perform`.
    @discardableResult
    func update(_ id: AccountID, _ event: AccountState.Event, now at: Date? = nil) -> [AccountState.Effect]? {
        let effects = update(id, event, now: at ?? now(), planned: nil)
        assert(effects?.vaultWrites.isEmpty ?? true, "\(event) names a vault write: it goes through perform")
        return effects
    }

    /// `update`'s publish, with the step `perform` planned (swapped in if nothing was published since it).
    private func update(_ id: AccountID, _ event: AccountState.Event, now time: Date,
                        planned: AccountOwner.Planned<[AccountState.Effect]?>?) -> [AccountState.Effect]? {
        precondition(AccountOwners.running == id, "account \(id) changed outside its owner")
        let owner = owners.owner(id)
        let (before, after, effects) = owner.publish(locksAtStart: AccountOwners.locksAtStart, now: time, planned: planned) { published in
            published?.handle(event, now: time)
        }
        didPublish(owner, before, after)
        return effects
    }

    /// Hands `event` to the machine as `update` does, after running the vault writes the machine names for
    /// it (`Effect.vault`), decided on a copy of the state held now: vault first, then memory, and an event
    /// the machine refuses throws (`orThrow`) having written nothing. Only from one of the account's own jobs.
    @discardableResult
    func perform(_ id: AccountID, _ event: AccountState.Event, now at: Date? = nil) async throws -> [AccountState.Effect]? {
        precondition(AccountOwners.running == id, "account \(id) changed outside its owner")
        let time = at ?? now()
        guard let held = owners.owner(id).current else { return nil }
        var next = held.state
        let effects = next.handle(event, now: time)
        for write in try effects.orThrow().vaultWrites { try await vault.apply(write, account: id) }
        // Stepped once: the copy is published as it is unless a lock, an unlock or a back-off came meanwhile.
        return update(id, event, now: time, planned: AccountOwner.Planned(version: held.version, state: next, answer: effects))
    }

    /// Publishes a new account's state (or forgets a deleted one): only from its own job.
    func install(_ id: AccountID, _ state: AccountState?) {
        precondition(AccountOwners.running == id, "account \(id) installed outside its owner")
        let owner = owners.owner(id)
        let (before, after, _) = owner.publish(locksAtStart: AccountOwners.locksAtStart, now: now()) { $0 = state }
        didPublish(owner, before, after)
    }

    /// What follows every publish of an account's state: the relay service's signer
    /// kept in step with the identity held, and, if what a read would answer changed,
    /// the reads waiting on the account decide again. The one place that wakes them.
    private func didPublish(_ owner: AccountOwner, _ before: AccountState?, _ after: AccountState?) {
        // The identity held now, not `after`'s (a lock made at once on another thread may have published
        // since), set again if a publish came between the read and the set: an earlier identity never outlasts a lock.
        owner.keepInStep { signRelayRequests(owner.id, as: $0?.identity) }
        // Woken with the state as published now (a lock made at once may have followed `after`).
        if before?.readModel != after?.readModel { owner.waiters.wakeAll(with: owner.current) }
    }

    /// Keeps the relay service's signer for the account in step with the identity held
    /// (none while locked: its records wait on the relay until the unlock).
    func signRelayRequests(_ id: AccountID, as identity: DeviceIdentity?) {
        relayCredentials?.set(id, signer: identity.map {
            RelayCredentials.Signer(key: $0.signing, box: $0.box.publicKey, deviceID: $0.deviceID)
        })
    }

    package func existing(_ id: AccountID) throws -> AccountState {
        guard let state = owners.state(id) else { throw Refusal.unknownAccount(id) }
        return state
    }

    /// Stores a key generation (made here, or received) wrapped under the KEK, in
    /// the vault and then in memory. Which key is current follows the log
    /// (`setCircle`), not the arrival of a key.
    ///
    /// The key goes into memory only if the account is still unlocked: a `lock`
    /// that landed during the vault write is not undone (the vault has the key,
    /// and the next unlock reads it).
    func storeKey(_ id: AccountID, _ generation: KeyGeneration, key: SecretKey, kek: SecretKey, accessibility: Accessibility,
                  makingCurrent: Bool = false) async throws {
        let item = StoredItem(attributes: KeychainItem.make(account: id, kind: .generationKey, generation: generation.number.value, keyID: generation.keyID,
                                                            accessibility: accessibility, at: now()),
                              wrapped: WrappedSecret.wrap(key.bytes, under: kek, context: WrapContext(account: id, kind: .generationKey, generation: generation.number.value)))
        // A lock that came first is not undone: its job ran to its end before this one began.
        try await perform(id, .keyStored(generation, item: item, key: key, makingCurrent: makingCurrent))
    }

    /// One account's status: a lookup, not every account's (this answers every create, unlock and lock).
    package func statusOf(_ id: AccountID) -> AccountStatus? {
        owners.read(id, AccountStatus.init)
    }

    /// Checks a passphrase against the vault under the unlock back-off. A wrong
    /// one extends the back-off (persisted) and is `denied`; while the back-off
    /// runs the answer is `throttled` and no KDF work is done.
    private func verify(_ passphrase: SecureBytes, for state: AccountState, owner: AccountOwner) async throws -> (SecretKey, [ItemSlot: SecureBytes]) {
        let id = state.record.id
        if case .throttled(let wait) = state.locking.attempt(at: now()) {
            throw Refusal.throttled(id, retryAfterSeconds: wait)
        }
        let kek = try await KDFRunner.deriveKEK(passphrase: passphrase, salt: state.record.salt, parameters: state.record.kdf)
        do {
            return (kek, try state.unwrapAll(with: kek))
        } catch CryptoError.authenticationFailed where state.kekOpensAnyItem(kek) {
            // The right passphrase, and a stored secret that fails under it: damage, not a guess.
            logger.error("vault item fails authentication under the right passphrase", metadata: ["account": "\(id)"])
            throw Refusal.damaged(id, "a wrapped secret fails its integrity check under the right passphrase (altered, or moved from another slot)")
        } catch CryptoError.authenticationFailed {
            let backoff = policy.current.backoff
            // At once (an unlock does not wait in the line), from the back-off held now.
            let at = now()
            let changed = owner.changeAtOnce { state -> (Locking, [Locking.Effect]) in
                let effects = state.handle(.wrongPassphrase(baseSeconds: backoff.baseSeconds, maxSeconds: backoff.maxSeconds), now: at).locking
                return (state.locking, effects)
            }
            guard let (before, after, (locking, effects)) = changed else { throw Refusal.unknownAccount(id) }
            didPublish(owner, before, after)
            do {
                try await persist(effects, for: id)
            } catch {
                // Fails closed: a wrong guess that cannot be recorded (a full disk) still costs the back-off,
                // held in memory until the daemon stops, and the answer is the one a healthy disk gives.
                logger.error("could not record a wrong passphrase; the back-off holds in memory", metadata: ["account": "\(id)", "problem": "\(error)"])
            }
            logger.warning("wrong passphrase", metadata: ["account": "\(id)", "failures": "\(locking.throttle.failures)"])
            throw Refusal(.denied, "wrong passphrase for \(id)")
        }
    }

    /// What `Locking` asked to keep in the vault.
    private func persist(_ effects: [Locking.Effect], for id: AccountID) async throws {
        for case .persistThrottle(let throttle) in effects {
            try await vault.recordUnlockAttempt(account: id, failures: throttle.failures, backoffUntil: throttle.until)
        }
    }

    /// Unlocks at once with `kek` (checked by `verify`): the secrets of the state held now are
    /// unwrapped under it (no KDF: a job may have stored an item while the KDF ran) and installed;
    /// then the vault's back-off is cleared.
    private func install(unlocked owner: AccountOwner, kek: SecretKey, locksBefore: UInt64) async throws {
        let id = owner.id
        let outcome: (before: AccountState, after: AccountState, effects: [Locking.Effect])?
        do {
            let at = now()
            outcome = try owner.unlockAtOnce(locksBefore: locksBefore) { state in
                try state.handle(.unlock(kek: kek, secrets: try state.unwrapAll(with: kek)), now: at).orThrow().locking
            }
        } catch VaultError.corrupt(let why) {
            throw Refusal.damaged(id, why)
        } catch CryptoError.authenticationFailed {
            logger.error("vault item fails authentication under the right passphrase", metadata: ["account": "\(id)"])
            throw Refusal.damaged(id, "a wrapped secret fails its integrity check under the right passphrase (altered, or moved from another slot)")
        }
        guard let (before, after, effects) = outcome else { throw Refusal.unknownAccount(id) }
        didPublish(owner, before, after)
        await unlocked(id, effects)
    }

    /// Unlocks with secrets unwrapped under `kek`, in the account's line (a passphrase change):
    /// memory changes, then the vault's back-off is cleared (as an unlock made at once does).
    private func install(unlocked id: AccountID, kek: SecretKey, secrets: [ItemSlot: SecureBytes]) async throws {
        guard let handled = update(id, .unlock(kek: kek, secrets: secrets)) else { throw Refusal.unknownAccount(id) }
        let effects: [Locking.Effect]
        do {
            effects = try handled.orThrow().locking
        } catch VaultError.corrupt(let why) {
            throw Refusal.damaged(id, why)
        }
        await unlocked(id, effects)
    }

    /// What follows an unlock published in memory: announced before anything is awaited (a lock
    /// made after it is announced after it), then the vault's back-off cleared.
    private func unlocked(_ id: AccountID, _ effects: [Locking.Effect]) async {
        for case .announce(let event) in effects { hub.announce(id, event) }
        do {
            try await persist(effects, for: id)
        } catch {
            // The back-off the vault still holds is stricter than the truth: it errs the safe way.
            logger.error("could not clear the unlock back-off in the vault", metadata: ["account": "\(id)", "problem": "\(error)"])
        }
    }
}

/// One account as `status` shows it.
package struct AccountStatus: Sendable, Codable, Equatable {
    package var account: String
    package var deviceId: DeviceID
    package var locked: Bool
    package var accessibility: String
    package var currentGeneration: Int
    package var generations: Int
    /// This device's place in the account's circle: `founding`, `joining`, `member`, `revoked` or `destroyed`.
    package var membership: String
}

extension AccountStatus {
    init(_ state: AccountState) {
        self.init(account: state.record.id.rawValue, deviceId: state.record.deviceID, locked: state.isLocked,
                  accessibility: state.record.accessibility.rawValue,
                  currentGeneration: state.currentGeneration?.value ?? 0, generations: state.generations.count,
                  membership: state.phase.name)
    }
}
