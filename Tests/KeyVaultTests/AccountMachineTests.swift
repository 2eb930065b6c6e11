import Foundation
import Testing
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultAccount

/// An account's value alone: no daemon, vault or relay. Each test is one row
/// of the state × event table in docs/ARCHITECTURE.md ("The account machine"),
/// named by its row number.
struct AccountFixture {
    let account = try! AccountID(validating: "kernel")
    let me = DeviceIdentity.generate()
    let other = DeviceIdentity.generate()
    let kek = SecretKey.generate()
    let first = SecretKey.generate()
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    var myKeys: DeviceKeys { DeviceKeys(signing: me.signing.publicKey, box: me.box.publicKey, name: "me") }
    var otherKeys: DeviceKeys { DeviceKeys(signing: other.signing.publicKey, box: other.box.publicKey, name: "other") }

    func generation(_ number: Generation, _ key: SecretKey) -> KeyGeneration {
        KeyGeneration(number: number, keyID: KeyID(of: key), createdAt: t0, state: .active)
    }

    func item(_ kind: ItemKind, _ number: Int, _ keyID: KeyID?, _ secret: SecureBytes, _ accessibility: Accessibility) -> StoredItem {
        StoredItem(attributes: KeychainItem.make(account: account, kind: kind, generation: number, keyID: keyID, accessibility: accessibility, at: t0),
                   wrapped: WrappedSecret.wrap(secret, under: kek, context: WrapContext(account: account, kind: kind, generation: number)))
    }

    /// This device's genesis of the account, signed as entry 0: at the account's creation (its key made
    /// at the same time), or `later` by a device that held the account on its own.
    func genesis(later: Bool = false) -> LogEntry {
        let created = UInt64(t0.timeIntervalSince1970 * 1000)
        return LogEntry.make(account: account, seq: 0, previousHash: LogHash.zero, signer: me.signing, signerID: me.deviceID,
                             body: .genesis(device: myKeys, generation: 1, keyID: KeyID(of: first), keyCreatedAt: created - (later ? 1 : 0)), at: t0)
    }

    /// An account as the vault would load it: this device's identity and generation 1, locked.
    /// `founded`: this device's genesis is its log (confirmed by the relay through `confirmed` entries);
    /// `joining`: a request is in the vault and nothing is held yet.
    func loaded(accessibility: Accessibility = .whenUnlocked, founded: Bool = true, foundedLater: Bool = false, confirmed: Int = 1,
                joining: [UInt8]? = nil) throws -> AccountState {
        let kdf = try KDFParameters(opsLimit: 1, memLimitBytes: 8192)
        var record = AccountRecord(id: account, createdAt: t0, kdf: kdf, salt: Random.bytes(16), accessibility: accessibility,
                                   deviceID: me.deviceID, signingPublicKey: me.signing.publicKey, boxPublicKey: me.box.publicKey,
                                   currentGeneration: 1, failedUnlocks: 0, backoffUntil: Date(timeIntervalSince1970: 0))
        record.currentKeyID = KeyID(of: first)
        let holds = joining == nil
        var items = [item(.deviceSigningKey, 0, nil, me.signing.seed, accessibility), item(.deviceBoxKey, 0, nil, me.box.secret, accessibility)]
        if holds { items.append(item(.generationKey, 1, KeyID(of: first), first.bytes, accessibility)) }
        var snapshot = AccountSnapshot(account: record, generations: holds ? [generation(1, first)] : [], items: items,
                                       enrollment: joining, logConfirmed: confirmed)
        if founded { snapshot.circleLog = [genesis(later: foundedLater).encoded] }
        return AccountState(snapshot: snapshot)
    }

    func unlocked(_ state: AccountState) throws -> AccountState {
        var state = state
        _ = try state.unlock(kek: kek, secrets: try state.unwrapAll(with: kek))
        return state
    }

    /// The next entry of `state`'s log, signed by `signer`.
    func next(_ state: AccountState, by signer: DeviceIdentity, _ body: LogEntry.Body) -> CircleState {
        var circle = state.circle
        try! circle.apply(circle.nextEntry(body, signer: signer.signing, signerID: signer.deviceID, at: t0.addingTimeInterval(1)))
        return circle
    }

    func withOther(_ state: AccountState) -> AccountState {
        var state = state
        state.circleAdopted(next(state, by: me, .approve(device: otherKeys, requestHash: RequestHash(computed: Array(repeating: 1, count: 32)))), confirmed: 2)
        return state
    }
}

@Suite("The account machine: its value alone, a row of the table per test")
struct AccountMachineTests {
    let f = AccountFixture()

    @Test("1. founding, unlocked: a key read is pending awaiting-relay, and waits")
    func foundingWaits() throws {
        let state = try f.unlocked(try f.loaded(confirmed: 0))
        #expect(state.phase == .founding)
        let read = state.read(.current, withRelay: true)
        guard case .pending(.awaitingRelay, _) = read.availability else { Issue.record("\(read.availability)"); return }
        #expect(read.waits)
    }

    @Test("2. founding + the relay confirms the genesis: member, the key is ready, the read model changed")
    func foundingConfirmed() throws {
        var state = try f.unlocked(try f.loaded(confirmed: 0))
        let before = state.readModel
        state.relayConfirmed(through: 1, settled: [])
        #expect(state.phase == .member)
        guard case .ready(let released) = state.read(.current, withRelay: true).availability else { Issue.record("not ready"); return }
        #expect(KeyID(of: released.key) == KeyID(of: f.first))
        #expect(state.readModel != before)
    }

    @Test("16. founded later, not yet on the relay: the keys it served before stay ready, and the phase is member")
    func foundedLaterServes() throws {
        let state = try f.unlocked(try f.loaded(foundedLater: true, confirmed: 0))
        #expect(state.isFounding && !state.foundedAtCreation)
        #expect(state.phase == .member)
        guard case .ready = state.read(.current, withRelay: true).availability else { Issue.record("not ready"); return }
    }

    @Test("3. member, unlocked + lock (whenUnlocked): locked, the KEK, identity and keys forgotten; reads answer locked and do not wait")
    func lockForgets() throws {
        var state = try f.unlocked(try f.loaded())
        let effects = state.lock()
        #expect(effects == [.forgetKEK, .forgetKeys, .announce(.locked)])
        #expect(state.isLocked && state.kek == nil && state.identity == nil && state.keys.isEmpty)
        let read = state.read(.current, withRelay: true)
        guard case .locked = read.availability else { Issue.record("\(read.availability)"); return }
        #expect(!read.waits)
    }

    @Test("4. member, unlocked + lock (afterFirstUnlock): locked, the keys stay readable")
    func lockKeepsAfterFirstUnlock() throws {
        var state = try f.unlocked(try f.loaded(accessibility: .afterFirstUnlock))
        #expect(state.lock() == [.forgetKEK, .announce(.locked)])
        #expect(state.isLocked && state.kek == nil)
        guard case .ready = state.read(.current, withRelay: true).availability else { Issue.record("not ready"); return }
    }

    @Test("5. member, locked + unlock: unlocked, the back-off cleared, ready")
    func unlock() throws {
        var state = try f.loaded()
        guard case .locked = state.read(.current, withRelay: true).availability else { Issue.record("not locked"); return }
        let effects = try state.unlock(kek: f.kek, secrets: try state.unwrapAll(with: f.kek))
        #expect(effects.contains(.announce(.unlocked)))
        #expect(!state.isLocked && state.identity?.deviceID == f.me.deviceID)
        guard case .ready = state.read(.current, withRelay: true).availability else { Issue.record("not ready"); return }
    }

    @Test("6. member, locked + a wrong passphrase: still locked, a back-off to keep, nothing a read sees changed")
    func wrongPassphrase() throws {
        var state = try f.loaded()
        #expect(throws: CryptoError.authenticationFailed) { try state.unwrapAll(with: SecretKey.generate()) }
        let before = state.readModel
        var locking = state.locking
        let effects = locking.wrongPassphrase(at: f.t0, baseSeconds: 1, maxSeconds: 60)
        state.throttled(locking)
        #expect(effects.contains { if case .persistThrottle(let t) = $0 { t.failures == 1 } else { false } })
        #expect(state.record.failedUnlocks == 1 && state.isLocked)
        #expect(state.readModel == before)
    }

    @Test("7. member + another device's announce: that generation is pending awaiting-delivery and waits; current is unchanged")
    func announcedNotHeld() throws {
        var state = f.withOther(try f.unlocked(try f.loaded()))
        let second = SecretKey.generate()
        state.circleAdopted(f.next(state, by: f.other, .announce(generation: 2, keyID: KeyID(of: second), keyCreatedAt: 0)), confirmed: 3)
        let read = state.read(.generation(2), withRelay: true)
        guard case .pending(.awaitingDelivery, _) = read.availability else { Issue.record("\(read.availability)"); return }
        #expect(read.waits)
        guard case .ready(let current) = state.read(.current, withRelay: true).availability else { Issue.record("not ready"); return }
        #expect(current.generation.number == 1)
    }

    @Test("8. member + a key stored: the waiting read's generation is ready; the read model changed (the one wake-up)")
    func keyStored() throws {
        var state = f.withOther(try f.unlocked(try f.loaded()))
        let second = SecretKey.generate()
        state.circleAdopted(f.next(state, by: f.other, .announce(generation: 2, keyID: KeyID(of: second), keyCreatedAt: 0)), confirmed: 3)
        let before = state.readModel
        state.keyStored(f.generation(2, second), item: f.item(.generationKey, 2, KeyID(of: second), second.bytes, .whenUnlocked), key: second)
        guard case .ready(let released) = state.read(.generation(2), withRelay: true).availability else { Issue.record("not ready"); return }
        #expect(KeyID(of: released.key) == KeyID(of: second))
        #expect(state.readModel != before)
    }

    @Test("8b. locked (whenUnlocked) + a key stored (a lock that landed during the vault's write): in the vault's items, not in memory; reads answer locked")
    func keyStoredWhileLocked() throws {
        var state = f.withOther(try f.loaded())
        let second = SecretKey.generate()
        state.circleAdopted(f.next(state, by: f.other, .announce(generation: 2, keyID: KeyID(of: second), keyCreatedAt: 0)), confirmed: 3)
        state.keyStored(f.generation(2, second), item: f.item(.generationKey, 2, KeyID(of: second), second.bytes, .whenUnlocked), key: second)
        #expect(state.keys.isEmpty && state.items.contains { $0.attributes.keyID == KeyID(of: second) })
        guard case .locked = state.read(.generation(2), withRelay: true).availability else { Issue.record("not locked"); return }
    }

    @Test("9. member, locked + a share arrives: kept sealed, not opened (at most the limit); reads answer locked; unlocked, a share is opened instead")
    func shareWhileLocked() throws {
        var state = f.withOther(try f.loaded())
        let second = SecretKey.generate()
        state.circleAdopted(f.next(state, by: f.other, .announce(generation: 2, keyID: KeyID(of: second), keyCreatedAt: 0)), confirmed: 3)
        let sealed = Random.bytes(200)
        #expect(try state.keepSealed(sealed, at: RelayCursor(7), limit: 2))
        #expect(state.keptShares[RelayCursor(7)] == sealed && state.keys.isEmpty)
        guard case .locked = state.read(.generation(2), withRelay: true).availability else { Issue.record("not locked"); return }
        // The same share read again is kept once; a third share past the limit of two is refused, not dropped silently.
        #expect(try state.keepSealed(sealed, at: RelayCursor(7), limit: 2))
        #expect(try state.keepSealed(sealed, at: RelayCursor(8), limit: 2))
        #expect(throws: ProtocolError.self) { try state.keepSealed(sealed, at: RelayCursor(9), limit: 2) }
        #expect(state.keptShares.count == 2)
        // Taken in at the unlock, they are gone; unlocked, the next share is opened, not kept.
        state.sharesTaken([RelayCursor(7), RelayCursor(8)])
        var open = try f.unlocked(state)
        #expect(try !open.keepSealed(sealed, at: RelayCursor(10), limit: 2) && open.keptShares.isEmpty)
    }

    @Test("9b. member, locked, shares kept + unlock: unlocked, the kept shares still there to open; each opened is ready, then taken away")
    func keptSharesAtUnlock() throws {
        var state = f.withOther(try f.loaded())
        let second = SecretKey.generate()
        state.circleAdopted(f.next(state, by: f.other, .announce(generation: 2, keyID: KeyID(of: second), keyCreatedAt: 0)), confirmed: 3)
        #expect(try state.keepSealed(Random.bytes(200), at: RelayCursor(7), limit: 2))
        state = try f.unlocked(state)
        // The unlock itself opens nothing: the account's next job (`takeKeptShares`) does, share by share.
        #expect(state.keptShares.count == 1)
        guard case .pending(.awaitingDelivery, _) = state.read(.generation(2), withRelay: true).availability else {
            Issue.record("not awaiting delivery"); return
        }
        state.keyStored(f.generation(2, second), item: f.item(.generationKey, 2, KeyID(of: second), second.bytes, .whenUnlocked), key: second)
        state.sharesTaken([RelayCursor(7)])
        #expect(state.keptShares.isEmpty)
        guard case .ready = state.read(.generation(2), withRelay: true).availability else { Issue.record("not ready"); return }
    }

    /// The table in docs/ARCHITECTURE.md and this suite say the same rows: each row is
    /// driven by a test named by its number, and each such test is a row.
    @Test("the state table's rows are this suite's tests, one each")
    func tableMatchesTests() throws {
        let here = URL(fileURLWithPath: #filePath)
        let root = here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let doc = try String(contentsOf: root.appendingPathComponent("docs/ARCHITECTURE.md"), encoding: .utf8)
        let section = try #require(doc.components(separatedBy: "## The account machine").dropFirst().first?.components(separatedBy: "\n## ").first)
        let rows = section.split(separator: "\n").compactMap { line -> String? in
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count > 2, let first = cells[1].first, first.isNumber else { return nil }
            return cells[1]
        }.sorted()
        let source = try String(contentsOf: here, encoding: .utf8)
        let named = source.components(separatedBy: "@Test(\"").dropFirst().compactMap { test -> String? in
            let number = test.prefix { $0 != "." && $0 != "\"" }
            return number.first?.isNumber == true ? String(number) : nil
        }.sorted()
        #expect(rows.count >= 16)
        // Sorted lists, not sets: a row or a test number given twice fails too.
        #expect(rows == named, "rows without a test: \(Set(rows).subtracting(named).sorted()); tests without a row: \(Set(named).subtracting(rows).sorted()); twice: \(rows.count - Set(rows).count) rows, \(named.count - Set(named).count) tests")
    }

    @Test("10. member + its own revocation: revoked; current answers revoked, what it held stays readable")
    func revoked() throws {
        var state = f.withOther(try f.unlocked(try f.loaded()))
        state.circleAdopted(f.next(state, by: f.other, .revoke(deviceID: f.me.deviceID)), confirmed: 3)
        #expect(state.phase == .revoked)
        guard case .revoked = state.read(.current, withRelay: true).availability else { Issue.record("current"); return }
        guard case .ready = state.read(.generation(1), withRelay: true).availability else { Issue.record("held"); return }
        #expect(!state.read(.current, withRelay: true).waits)
    }

    @Test("11. member + a destroy entry, then shredded: destroyed; no key in memory or items, nothing owed")
    func destroyed() throws {
        var state = f.withOther(try f.unlocked(try f.loaded()))
        state.circleAdopted(f.next(state, by: f.other, .destroy), confirmed: 3)
        state.shredded()
        #expect(state.phase == .destroyed)
        #expect(state.keys.isEmpty && state.owedDeliveries.isEmpty && !state.items.contains { $0.attributes.kind == .generationKey })
        guard case .destroyed = state.read(.current, withRelay: true).availability else { Issue.record("not destroyed"); return }
    }

    @Test("12. joining, a request made: pending awaiting-approval and waits; locked wins")
    func joiningAwaits() throws {
        var circle = CircleState(account: f.account)
        try circle.apply(LogEntry.make(account: f.account, seq: 0, previousHash: LogHash.zero, signer: f.other.signing, signerID: f.other.deviceID,
                                       body: .genesis(device: f.otherKeys, generation: 1, keyID: KeyID(of: f.first), keyCreatedAt: 0), at: f.t0))
        let started = try PairingRequest.make(account: f.account, device: f.myKeys, signer: f.me.signing, code: "042917", headHash: circle.headHash, at: f.t0)
        var state = try f.loaded(founded: false, confirmed: 0, joining: started.request.encoded)
        state.circleAdopted(circle, confirmed: 1)
        state.requestedToJoin(started.request, code: "042917")
        guard case .locked = state.read(.current, withRelay: true).availability else { Issue.record("locked wins"); return }
        state = try f.unlocked(state)
        #expect(state.phase == .joining(failed: false))
        let read = state.read(.current, withRelay: true)
        guard case .pending(.awaitingApproval, _) = read.availability else { Issue.record("\(read.availability)"); return }
        #expect(read.waits)
    }

    @Test("13. joining after a restart ended the exchange: pending code-mismatch (enroll again)")
    func joiningEnded() throws {
        let state = try f.unlocked(try f.loaded(founded: false, confirmed: 0, joining: [1, 2, 3]))
        #expect(state.phase == .joining(failed: true))
        guard case .pending(.codeMismatch, _) = state.read(.current, withRelay: true).availability else { Issue.record("not code-mismatch"); return }
    }

    @Test("14. member: a generation never announced is unknown, and waits only with a relay (it may be announced any moment)")
    func unknownWaitsWithRelay() throws {
        let state = try f.unlocked(try f.loaded())
        let withRelay = state.read(.generation(9), withRelay: true)
        guard case .unknown = withRelay.availability else { Issue.record("\(withRelay.availability)"); return }
        #expect(withRelay.waits)
        #expect(!state.read(.generation(9), withRelay: false).waits)
    }

    @Test("15. member + this device revoked another: a rotation is owed, read from the log (so a crash cannot lose it); its announce turns it into a promotion")
    func revokeOwesRotation() throws {
        var state = f.withOther(try f.unlocked(try f.loaded()))
        state.circleAdopted(f.next(state, by: f.me, .revoke(deviceID: f.other.deviceID)), confirmed: 3)
        #expect(state.circle.revokeDebt(signedBy: f.me.deviceID) == .rotate(revoked: f.other.deviceID))
        let second = SecretKey.generate()
        state.circleAdopted(f.next(state, by: f.me, .announce(generation: 2, keyID: KeyID(of: second), keyCreatedAt: 0)), confirmed: 4)
        #expect(state.circle.revokeDebt(signedBy: f.me.deviceID) == .promote(keyID: KeyID(of: second)))
        state.circleAdopted(f.next(state, by: f.me, .promote(generation: 2, keyID: KeyID(of: second))), confirmed: 5)
        #expect(state.circle.revokeDebt(signedBy: f.me.deviceID) == nil)
    }
}
