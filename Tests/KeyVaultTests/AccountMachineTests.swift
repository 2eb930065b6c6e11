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
        _ = try state.handle(.unlock(kek: kek, secrets: try state.unwrapAll(with: kek)), now: t0).orThrow()
        return state
    }

    /// The next entry of `state`'s log, signed by `signer`.
    func next(_ state: AccountState, by signer: DeviceIdentity, _ body: LogEntry.Body) -> CircleState {
        var circle = state.circle
        try! circle.apply(circle.nextEntry(body, signer: signer.signing, signerID: signer.deviceID, at: t0.addingTimeInterval(1)))
        return circle
    }

    func withOther(_ state: AccountState) -> AccountState {
        adopted(state, next(state, by: me, .approve(device: otherKeys, requestHash: RequestHash(computed: Array(repeating: 1, count: 32)))))
    }

    /// The event of the next entry of `state`'s log, signed by `signer`, adopted from the relay (which holds all of it).
    func adoptingNext(_ state: AccountState, by signer: DeviceIdentity, _ body: LogEntry.Body) -> AccountState.Event {
        let circle = next(state, by: signer, body)
        return .circleAdopted(circle, confirmed: circle.entries.count)
    }

    /// `state` with `circle` adopted from the relay, which holds all of it.
    func adopted(_ state: AccountState, _ circle: CircleState) -> AccountState {
        var state = state
        state.handle(.circleAdopted(circle, confirmed: circle.entries.count), now: t0)
        return state
    }

    /// The second key, generation 2, that `other` announces in `announcedSecond`.
    var second: SecretKey { Self.second }
    private static let second = SecretKey.generate()

    /// `state` with another device's announce of generation 2 adopted (the key not held here).
    func announcedSecond(_ state: AccountState) -> AccountState {
        adopted(state, next(state, by: other, .announce(generation: 2, keyID: KeyID(of: second), keyCreatedAt: 0)))
    }

    /// The event of generation 2's key, opened from a share, reaching the vault.
    var secondStored: AccountState.Event {
        .keyStored(generation(2, second), item: item(.generationKey, 2, KeyID(of: second), second.bytes, .whenUnlocked), key: second, makingCurrent: false)
    }
}

/// One row of the state table: a state reached from the vault's load by the machine's own
/// events (never by setting a field), the event handed to it (none: a read alone), and the key
/// read asked after.
struct TableRow: Sendable {
    let number: String
    let start: @Sendable (AccountFixture) throws -> AccountState
    let event: (@Sendable (AccountFixture, AccountState) throws -> AccountState.Event)?
    var selector: KeySelector = .current

    /// The row stepped: the state before, the effects, the state after.
    func run(_ f: AccountFixture) throws -> (before: AccountState, effects: [AccountState.Effect], after: AccountState) {
        let before = try start(f)
        var after = before
        let effects = try event.map { after.handle(try $0(f, before), now: f.t0) } ?? []
        return (before, effects, after)
    }
}

extension TableRow {
    /// The rows of docs/ARCHITECTURE.md's table, in its order.
    static let all: [TableRow] = [
        TableRow(number: "1", start: { f in try f.unlocked(try f.loaded(confirmed: 0)) }, event: nil),
        TableRow(number: "2", start: { f in try f.unlocked(try f.loaded(confirmed: 0)) }, event: { _, _ in .relayConfirmed(through: 1, settled: []) }),
        TableRow(number: "16", start: { f in try f.unlocked(try f.loaded(foundedLater: true, confirmed: 0)) }, event: nil),
        TableRow(number: "3", start: { f in try f.unlocked(try f.loaded()) }, event: { _, _ in .lock }),
        TableRow(number: "4", start: { f in try f.unlocked(try f.loaded(accessibility: .afterFirstUnlock)) }, event: { _, _ in .lock }),
        TableRow(number: "5", start: { f in try f.loaded() }, event: { f, state in .unlock(kek: f.kek, secrets: try state.unwrapAll(with: f.kek)) }),
        TableRow(number: "6", start: { f in try f.loaded() }, event: { _, _ in .wrongPassphrase(baseSeconds: 1, maxSeconds: 60) }),
        TableRow(number: "7", start: { f in f.withOther(try f.unlocked(try f.loaded())) },
                 event: { f, state in f.adoptingNext(state, by: f.other, .announce(generation: 2, keyID: KeyID(of: f.second), keyCreatedAt: 0)) },
                 selector: .generation(2)),
        TableRow(number: "8", start: { f in f.announcedSecond(f.withOther(try f.unlocked(try f.loaded()))) }, event: { f, _ in f.secondStored },
                 selector: .generation(2)),
        TableRow(number: "8b", start: { f in f.announcedSecond(f.withOther(try f.loaded())) }, event: { f, _ in f.secondStored }, selector: .generation(2)),
        TableRow(number: "9", start: { f in f.announcedSecond(f.withOther(try f.loaded())) },
                 event: { _, _ in .shareArrived(sealed: Array(repeating: 7, count: 200), cursor: RelayCursor(7), limit: 2) }, selector: .generation(2)),
        TableRow(number: "9b", start: { f in
                     var state = f.announcedSecond(f.withOther(try f.loaded()))
                     state.handle(.shareArrived(sealed: Array(repeating: 7, count: 200), cursor: RelayCursor(7), limit: 2), now: f.t0)
                     return state
                 }, event: { f, state in .unlock(kek: f.kek, secrets: try state.unwrapAll(with: f.kek)) }, selector: .generation(2)),
        TableRow(number: "10", start: { f in f.withOther(try f.unlocked(try f.loaded())) },
                 event: { f, state in f.adoptingNext(state, by: f.other, .revoke(deviceID: f.me.deviceID)) }),
        TableRow(number: "11", start: { f in let state = f.withOther(try f.unlocked(try f.loaded())); return f.adopted(state, f.next(state, by: f.other, .destroy)) },
                 event: { _, _ in .shredded }),
        TableRow(number: "12", start: { f in
                     var circle = CircleState(account: f.account)
                     try circle.apply(LogEntry.make(account: f.account, seq: 0, previousHash: LogHash.zero, signer: f.other.signing, signerID: f.other.deviceID,
                                                    body: .genesis(device: f.otherKeys, generation: 1, keyID: KeyID(of: f.first), keyCreatedAt: 0), at: f.t0))
                     let started = try PairingRequest.make(account: f.account, device: f.myKeys, signer: f.me.signing, code: "042917", headHash: circle.headHash, at: f.t0)
                     var state = f.adopted(try f.loaded(founded: false, confirmed: 0, joining: started.request.encoded), circle)
                     state.handle(.requestedToJoin(started.request, code: "042917"), now: f.t0)
                     return state
                 }, event: { f, state in .unlock(kek: f.kek, secrets: try state.unwrapAll(with: f.kek)) }),
        TableRow(number: "13", start: { f in try f.unlocked(try f.loaded(founded: false, confirmed: 0, joining: [1, 2, 3])) }, event: nil),
        TableRow(number: "14", start: { f in try f.unlocked(try f.loaded()) }, event: nil, selector: .generation(9)),
        TableRow(number: "15", start: { f in f.withOther(try f.unlocked(try f.loaded())) },
                 event: { f, state in f.adoptingNext(state, by: f.me, .revoke(deviceID: f.other.deviceID)) }),
    ]

    static func row(_ number: String) -> TableRow { all.first { $0.number == number }! }
}

/// The table's cells, as the machine's values say them.
enum StateTable {
    static let header = """
        | #  | phase, lock | event | after | keys in memory | effects | a key read answers | waits |
        |----|-------------|-------|-------|----------------|---------|--------------------|-------|
        """

    static func render(_ f: AccountFixture) throws -> String {
        try ([header] + TableRow.all.map { row in
            let (before, effects, after) = try row.run(f)
            let event = try row.event.map { name(of: try $0(f, before), me: before.deviceID) }
            let read = after.read(row.selector, withRelay: true)
            let cells = [row.number.padding(toLength: 2, withPad: " ", startingAt: 0), state(before), event ?? "(a read)",
                         row.event == nil ? "—" : state(after), "\(after.keys.count)",
                         describe(effects, wakes: before.readModel != after.readModel),
                         "\(selector(row.selector)): \(answer(read.availability))", read.waits ? "yes" : "no"]
            return "| " + cells.joined(separator: " | ") + " |"
        }).joined(separator: "\n")
    }

    static func state(_ s: AccountState) -> String {
        var text: String
        switch s.phase {
        case .founding: text = "founding"
        case .joining(_, let failed): text = failed ? "joining (failed)" : "joining"
        case .member: text = "member"
        case .revoked: text = "revoked"
        case .destroyed: text = "destroyed"
        }
        text += s.isLocked ? ", locked" : ", unlocked"
        if s.locking.accessibility == .afterFirstUnlock { text += " (afterFirstUnlock)" }
        if !s.keptShares.isEmpty { text += "; \(s.keptShares.count) share kept sealed" }
        switch s.circle.revokeDebt(signedBy: s.deviceID) {
        case .rotate?: text += "; owes a rotation"
        case .promote?: text += "; owes a promotion"
        case nil: break
        }
        if s.record.failedUnlocks > 0 { text += "; back-off \(s.record.failedUnlocks)" }
        return text
    }

    /// An event's case name: never its payload (keys, passphrase-derived secrets). An adopted
    /// circle is told by its last entry, and whose it is.
    static func name(of event: AccountState.Event, me: DeviceID) -> String {
        let name = Mirror(reflecting: event).children.first?.label ?? "\(event)"
        guard case .circleAdopted(let circle, _) = event, let last = circle.entries.last else { return "`\(name)`" }
        let kind = Mirror(reflecting: last.body).children.first?.label ?? "\(last.body)"
        return "`\(name)` (\(kind) by \(last.signer == me ? "this device" : "another"))"
    }

    static func describe(_ effects: [AccountState.Effect], wakes: Bool) -> String {
        let names = effects.map { effect -> String in
            switch effect {
            case .vault(let write): "vault " + (Mirror(reflecting: write).children.first?.label ?? "\(write)")
            case .locking(.announce(let event)): "announce `\(event.name)`"
            case .locking(let decided): Mirror(reflecting: decided).children.first?.label ?? "\(decided)"
            case .promotion(let decided): Mirror(reflecting: decided).children.first?.label ?? "\(decided)"
            case .approval(let check): "approval \(check)"
            case .replay: "replay"
            case .refused: "refused"
            case .damaged: "damaged"
            case .kept, .openShare, .joined: "\(effect)"
            }
        } + (wakes ? ["wake"] : [])
        return names.isEmpty ? "—" : names.joined(separator: ", ")
    }

    static func selector(_ selector: KeySelector) -> String {
        switch selector {
        case .current: "current"
        case .generation(let number): "generation \(number)"
        case .keyID: "a key ID"
        }
    }

    static func answer(_ availability: KeyAvailability) -> String {
        switch availability {
        case .ready: "ready"
        case .pending(let reason, _): "pending `\(reason.rawValue)`"
        case .locked: "locked"
        case .unknown: "unknown"
        case .revoked: "revoked"
        case .destroyed: "destroyed"
        }
    }
}

@Suite("The account machine: its value alone, a row of the table per test")
struct AccountMachineTests {
    let f = AccountFixture()

    static let tableStart = "<!-- the state table: generated by AccountMachineTests; KEYVAULT_WRITE_STATE_TABLE=1 writes it -->"
    static let tableEnd = "<!-- end of the state table -->"

    static var architecture: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/ARCHITECTURE.md")
    }

    @Test("the state table in docs/ARCHITECTURE.md is the one the machine generates, and each of its rows is a test")
    func tableIsGenerated() throws {
        let table = try StateTable.render(f)
        let doc = try String(contentsOf: Self.architecture, encoding: .utf8)
        let parts = doc.components(separatedBy: Self.tableStart)
        try #require(parts.count == 2, "docs/ARCHITECTURE.md has no (or two) state table markers")
        let rest = parts[1].components(separatedBy: Self.tableEnd)
        try #require(rest.count == 2, "docs/ARCHITECTURE.md has no end marker after the state table")
        if ProcessInfo.processInfo.environment["KEYVAULT_WRITE_STATE_TABLE"] == "1" {
            try (parts[0] + Self.tableStart + "\n" + table + "\n" + Self.tableEnd + rest[1]).write(to: Self.architecture, atomically: true, encoding: .utf8)
        } else {
            #expect(rest[0].trimmingCharacters(in: .newlines) == table, "the state table is not the machine's: run this test with KEYVAULT_WRITE_STATE_TABLE=1")
        }
        // Every row is a test named by its number, and every numbered test a row.
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let named = source.components(separatedBy: "@Test(\"").dropFirst().compactMap { test -> String? in
            let number = test.prefix { $0 != "." && $0 != "\"" }
            return number.first?.isNumber == true ? String(number) : nil
        }.sorted()
        let rows = TableRow.all.map(\.number).sorted()
        #expect(rows.count >= 18)
        #expect(rows == named, "rows without a test: \(Set(rows).subtracting(named).sorted()); tests without a row: \(Set(named).subtracting(rows).sorted())")
    }

    @Test("the machine names the vault write of each event that needs one, from the event and the state it steps")
    func vaultWritesNamed() throws {
        var state = f.announcedSecond(f.withOther(try f.unlocked(try f.loaded())))
        let dropped = KeyID(of: f.second)
        #expect(state.handle(.generationDropped(dropped), now: f.t0).vaultWrites == [.removeGeneration(dropped)])
        #expect(state.handle(.pairingKeyKept([1, 2, 3]), now: f.t0).vaultWrites == [.keepPairingKey([1, 2, 3])])
        let stranger = DeviceID(Array(repeating: 7, count: 16))
        #expect(state.handle(.dismissed(stranger), now: f.t0).vaultWrites == [.dismissRequest(stranger)])
        let items = state.items, salt = Array(repeating: UInt8(9), count: 16)
        #expect(state.handle(.rewrapped(items: items, salt: salt, kdf: state.record.kdf), now: f.t0).vaultWrites
                == [.rewrap(items: items, salt: salt, kdf: state.record.kdf)])
        // A promotion clears only the deadlines the machine holds: none here, so nothing is written.
        #expect(state.handle(.promoted(dropped), now: f.t0).vaultWrites.isEmpty)
        // The relay's cursor goes to the vault with a record kept, else once every `cursorWriteInterval` rows.
        let interval = AccountState.cursorWriteInterval
        #expect(state.handle(.read(upTo: RelayCursor(Int64(interval - 1)), rows: interval - 1, kept: []), now: f.t0).vaultWrites.isEmpty)
        #expect(state.handle(.read(upTo: RelayCursor(Int64(interval)), rows: 1, kept: []), now: f.t0).vaultWrites
                == [.advanceRelayCursor(to: RelayCursor(Int64(interval)), keep: [])])
        let note = RelayNote(cursor: RelayCursor(Int64(interval + 1)), kind: .share, body: [1], seenAt: f.t0)
        #expect(state.handle(.read(upTo: note.cursor, rows: 1, kept: [note]), now: f.t0).vaultWrites == [.advanceRelayCursor(to: note.cursor, keep: [note])])
        #expect(state.handle(.relayConfirmed(through: 1, settled: []), now: f.t0).vaultWrites == [.confirmLog(through: 1, settled: [])])
        // Shares kept while locked, taken since: their notes dropped (none taken, nothing written).
        #expect(state.handle(.sharesTaken([note.cursor]), now: f.t0).vaultWrites == [.dropRelayNotes([note.cursor])])
        #expect(state.handle(.sharesTaken([]), now: f.t0).vaultWrites.isEmpty)
        // Events that change memory only name no write.
        #expect(state.handle(.lock, now: f.t0).vaultWrites.isEmpty)
    }

    @Test("the machine names the log's write: entries appended after the last one shared, or the log replaced from the first that differs")
    func logWritesNamed() throws {
        let state = f.withOther(try f.unlocked(try f.loaded()))
        let count = state.circle.entries.count
        // Another device's entry adopted: appended, with the count the relay holds and the current key.
        let theirs = f.next(state, by: f.other, .announce(generation: 2, keyID: KeyID(of: f.second), keyCreatedAt: 0))
        var copy = state
        #expect(copy.handle(.circleAdopted(theirs, confirmed: count + 1), now: f.t0).vaultWrites
                == [.appendLog(entries: [theirs.entries[count]], confirmed: count + 1, current: state.currentKey(after: theirs), owe: [],
                               promotionDeadline: nil, outbox: [])])
        // This device's entry, rebased after another's: the log replaced from where they part.
        let mine = f.next(state, by: f.me, .announce(generation: 2, keyID: KeyID(of: SecretKey.generate()), keyCreatedAt: 0))
        copy = state
        copy.handle(.appended(mine, owing: [], promotion: nil), now: f.t0)
        #expect(copy.handle(.circleAdopted(theirs, confirmed: count + 1), now: f.t0).vaultWrites
                == [.replaceLog(from: LogSeq(index: count), entries: [theirs.entries[count]], confirmed: count + 1, current: state.currentKey(after: theirs))])
        // Appended here: the entry with what rides with it, in one write.
        copy = state
        let deadline = (keyID: KeyID(of: f.second), at: f.t0)
        let ack = RelayRecord(kind: .ack, account: f.account, recipient: nil, logSeq: nil, body: [1])
        #expect(copy.handle(.appended(mine, owing: [], promotion: deadline, outbox: [ack]), now: f.t0).vaultWrites
                == [.appendLog(entries: [mine.entries[count]], confirmed: nil, current: state.currentKey(after: mine), owe: [],
                               promotionDeadline: .init(keyID: deadline.keyID, at: deadline.at), outbox: [ack])])
        // A circle read afresh: replaced whole, from the genesis, even where it only grew.
        copy = state
        #expect(copy.handle(.circleReadAfresh(theirs), now: f.t0).vaultWrites
                == [.replaceLog(from: .genesis, entries: theirs.entries, confirmed: count + 1, current: state.currentKey(after: theirs))])
        // A founding withdrawn: the log replaced from its genesis by nothing.
        copy = state
        #expect(copy.handle(.circleAdopted(CircleState(account: f.account), confirmed: 0), now: f.t0).vaultWrites
                == [.replaceLog(from: .genesis, entries: [], confirmed: 0, current: state.record.currentKey)])
    }

    @Test("every event leaves the value as it was when the machine refuses it")
    func refusedChangesNothing() throws {
        // A third share past the limit of two, and an unlock whose stored key is not its key ID's: neither changes anything.
        var state = f.announcedSecond(f.withOther(try f.loaded()))
        state.handle(.shareArrived(sealed: Random.bytes(200), cursor: RelayCursor(7), limit: 2), now: f.t0)
        state.handle(.shareArrived(sealed: Random.bytes(200), cursor: RelayCursor(8), limit: 2), now: f.t0)
        let before = state
        let refused = state.handle(.shareArrived(sealed: Random.bytes(200), cursor: RelayCursor(9), limit: 2), now: f.t0)
        guard case .refused? = refused.first else { Issue.record("\(refused)"); return }
        #expect(state.keptShares == before.keptShares)
        #expect(throws: ProtocolError.self) { try refused.orThrow() }

        var secrets = try state.unwrapAll(with: f.kek)
        let slot = try #require(secrets.keys.first { $0.kind == .generationKey })
        secrets[slot] = SecureBytes(copying: SecretKey.generate().bytes.withUnsafeBytes { Array($0) })
        let damaged = state.handle(.unlock(kek: f.kek, secrets: secrets), now: f.t0)
        guard case .damaged? = damaged.first else { Issue.record("\(damaged)"); return }
        #expect(state.isLocked && state.kek == nil && state.keys.isEmpty)
        #expect(throws: VaultError.self) { try damaged.orThrow() }
    }

    @Test("a destroy entry decides nothing for a device that cannot trust its circle yet (joining) or hears nothing after its removal (revoked)")
    func destroyOutranksNothingUntrusted() throws {
        // Joining: a relay shows a circle of its own making, ending in a destroy. Not approved, the device
        // trusts none of it: still joining, still awaiting approval (not a final `destroyed`).
        var circle = CircleState(account: f.account)
        try circle.apply(LogEntry.make(account: f.account, seq: 0, previousHash: LogHash.zero, signer: f.other.signing, signerID: f.other.deviceID,
                                       body: .genesis(device: f.otherKeys, generation: 1, keyID: KeyID(of: f.first), keyCreatedAt: 0), at: f.t0))
        let started = try PairingRequest.make(account: f.account, device: f.myKeys, signer: f.me.signing, code: "042917", headHash: circle.headHash, at: f.t0)
        var joining = f.adopted(try f.loaded(founded: false, confirmed: 0, joining: started.request.encoded), circle)
        joining.handle(.requestedToJoin(started.request, code: "042917"), now: f.t0)
        try circle.apply(circle.nextEntry(.destroy, signer: f.other.signing, signerID: f.other.deviceID, at: f.t0))
        joining = try f.unlocked(f.adopted(joining, circle))
        #expect(joining.circle.destroyed)
        #expect(joining.phase == .joining(since: f.t0, failed: false))
        guard case .pending(.awaitingApproval, _) = joining.read(.current, withRelay: true).availability else { Issue.record("joining"); return }

        // Revoked, then a destroy: it still answers `revoked` for the current key, and keeps what it held.
        var revoked = f.withOther(try f.unlocked(try f.loaded()))
        revoked = f.adopted(revoked, f.next(revoked, by: f.other, .revoke(deviceID: f.me.deviceID)))
        revoked = f.adopted(revoked, f.next(revoked, by: f.other, .destroy))
        #expect(revoked.phase == .revoked)
        guard case .revoked = revoked.read(.current, withRelay: true).availability else { Issue.record("revoked"); return }

        // A member: destroyed.
        var member = f.withOther(try f.unlocked(try f.loaded()))
        member = f.adopted(member, f.next(member, by: f.other, .destroy))
        #expect(member.phase == .destroyed)
    }

    @Test("1. founding, unlocked: a key read is pending awaiting-relay, and waits")
    func foundingWaits() throws {
        let (_, _, state) = try TableRow.row("1").run(f)
        #expect(state.phase.name == "founding")
        let read = state.read(.current, withRelay: true)
        guard case .pending(.awaitingRelay, _) = read.availability else { Issue.record("\(read.availability)"); return }
        #expect(read.waits)
    }

    @Test("2. founding + the relay confirms the genesis: member, the key is ready, the read model changed")
    func foundingConfirmed() throws {
        let (before, _, state) = try TableRow.row("2").run(f)
        #expect(state.phase.name == "member")
        guard case .ready(let released) = state.read(.current, withRelay: true).availability else { Issue.record("not ready"); return }
        #expect(KeyID(of: released.key) == KeyID(of: f.first))
        #expect(state.readModel != before.readModel)
    }

    @Test("16. founded later, not yet on the relay: the keys it served before stay ready, and the phase is member")
    func foundedLaterServes() throws {
        let (_, _, state) = try TableRow.row("16").run(f)
        #expect(state.isFounding && !state.foundedAtCreation)
        #expect(state.phase.name == "member")
        guard case .ready = state.read(.current, withRelay: true).availability else { Issue.record("not ready"); return }
    }

    @Test("3. member, unlocked + lock (whenUnlocked): locked, the KEK, identity and keys forgotten; reads answer locked and do not wait")
    func lockForgets() throws {
        let (_, effects, state) = try TableRow.row("3").run(f)
        #expect(effects.locking == [.forgetKEK, .forgetKeys, .announce(.locked)])
        #expect(state.isLocked && state.kek == nil && state.identity == nil && state.keys.isEmpty)
        let read = state.read(.current, withRelay: true)
        guard case .locked = read.availability else { Issue.record("\(read.availability)"); return }
        #expect(!read.waits)
    }

    @Test("4. member, unlocked + lock (afterFirstUnlock): locked, the keys stay readable")
    func lockKeepsAfterFirstUnlock() throws {
        let (_, effects, state) = try TableRow.row("4").run(f)
        #expect(effects.locking == [.forgetKEK, .announce(.locked)])
        #expect(state.isLocked && state.kek == nil)
        guard case .ready = state.read(.current, withRelay: true).availability else { Issue.record("not ready"); return }
    }

    @Test("5. member, locked + unlock: unlocked, the back-off cleared, ready")
    func unlock() throws {
        let (before, effects, state) = try TableRow.row("5").run(f)
        guard case .locked = before.read(.current, withRelay: true).availability else { Issue.record("not locked"); return }
        #expect(effects.locking.contains(.announce(.unlocked)))
        #expect(!state.isLocked && state.identity?.deviceID == f.me.deviceID)
        guard case .ready = state.read(.current, withRelay: true).availability else { Issue.record("not ready"); return }
    }

    @Test("6. member, locked + a wrong passphrase: still locked, a back-off to keep, nothing a read sees changed")
    func wrongPassphrase() throws {
        let (before, effects, state) = try TableRow.row("6").run(f)
        #expect(throws: CryptoError.authenticationFailed) { try before.unwrapAll(with: SecretKey.generate()) }
        #expect(effects.locking.contains { if case .persistThrottle(let t) = $0 { t.failures == 1 } else { false } })
        #expect(state.record.failedUnlocks == 1 && state.isLocked)
        #expect(state.readModel == before.readModel)
    }

    @Test("7. member + another device's announce: that generation is pending awaiting-delivery and waits; current is unchanged")
    func announcedNotHeld() throws {
        let (_, _, state) = try TableRow.row("7").run(f)
        let read = state.read(.generation(2), withRelay: true)
        guard case .pending(.awaitingDelivery, _) = read.availability else { Issue.record("\(read.availability)"); return }
        #expect(read.waits)
        guard case .ready(let current) = state.read(.current, withRelay: true).availability else { Issue.record("not ready"); return }
        #expect(current.generation.number == 1)
    }

    @Test("8. member + a key stored: the waiting read's generation is ready; the read model changed (the one wake-up)")
    func keyStored() throws {
        let (before, effects, state) = try TableRow.row("8").run(f)
        guard effects.vaultWrites.count == 1, case .addGeneration(let generation, let item, false) = effects.vaultWrites[0] else {
            Issue.record("the machine named \(effects.vaultWrites), not the generation's write"); return
        }
        #expect(generation.keyID == KeyID(of: f.second) && state.items.contains(item))
        guard case .ready(let released) = state.read(.generation(2), withRelay: true).availability else { Issue.record("not ready"); return }
        #expect(KeyID(of: released.key) == KeyID(of: f.second))
        #expect(state.readModel != before.readModel)
    }

    @Test("8b. locked (whenUnlocked) + a key stored (a lock that landed during the vault's write): in the vault's items, not in memory; reads answer locked")
    func keyStoredWhileLocked() throws {
        let (_, effects, state) = try TableRow.row("8b").run(f)
        #expect(effects.vaultWrites.count == 1, "locked, the key still goes to the vault")
        #expect(state.keys.isEmpty && state.items.contains { $0.attributes.keyID == KeyID(of: f.second) })
        guard case .locked = state.read(.generation(2), withRelay: true).availability else { Issue.record("not locked"); return }
    }

    @Test("9. member, locked + a share arrives: kept sealed, not opened (at most the limit); reads answer locked; unlocked, a share is opened instead")
    func shareWhileLocked() throws {
        var (_, effects, state) = try TableRow.row("9").run(f)
        #expect(effects == [.kept])
        #expect(state.keptShares[RelayCursor(7)] == Array(repeating: 7, count: 200) && state.keys.isEmpty)
        guard case .locked = state.read(.generation(2), withRelay: true).availability else { Issue.record("not locked"); return }
        // The same share read again is kept once; a third share past the limit of two is refused, not dropped silently.
        let sealed = Random.bytes(200)
        #expect(state.handle(.shareArrived(sealed: sealed, cursor: RelayCursor(7), limit: 2), now: f.t0) == [.kept])
        #expect(state.handle(.shareArrived(sealed: sealed, cursor: RelayCursor(8), limit: 2), now: f.t0) == [.kept])
        #expect(throws: ProtocolError.self) { try state.handle(.shareArrived(sealed: sealed, cursor: RelayCursor(9), limit: 2), now: f.t0).orThrow() }
        #expect(state.keptShares.count == 2)
        // Taken in at the unlock, they are gone; unlocked, the next share is opened, not kept.
        state.handle(.sharesTaken([RelayCursor(7), RelayCursor(8)]), now: f.t0)
        var open = try f.unlocked(state)
        #expect(open.handle(.shareArrived(sealed: sealed, cursor: RelayCursor(10), limit: 2), now: f.t0) == [.openShare] && open.keptShares.isEmpty)
    }

    @Test("9b. member, locked, shares kept + unlock: unlocked, the kept shares still there to open; each opened is ready, then taken away")
    func keptSharesAtUnlock() throws {
        var (_, _, state) = try TableRow.row("9b").run(f)
        // The unlock itself opens nothing: the account's next job (`takeKeptShares`) does, share by share.
        #expect(state.keptShares.count == 1)
        guard case .pending(.awaitingDelivery, _) = state.read(.generation(2), withRelay: true).availability else {
            Issue.record("not awaiting delivery"); return
        }
        state.handle(f.secondStored, now: f.t0)
        state.handle(.sharesTaken([RelayCursor(7)]), now: f.t0)
        #expect(state.keptShares.isEmpty)
        guard case .ready = state.read(.generation(2), withRelay: true).availability else { Issue.record("not ready"); return }
    }

    @Test("10. member + its own revocation: revoked; current answers revoked, what it held stays readable")
    func revoked() throws {
        let (_, _, state) = try TableRow.row("10").run(f)
        #expect(state.phase == .revoked)
        guard case .revoked = state.read(.current, withRelay: true).availability else { Issue.record("current"); return }
        guard case .ready = state.read(.generation(1), withRelay: true).availability else { Issue.record("held"); return }
        #expect(!state.read(.current, withRelay: true).waits)
    }

    @Test("11. member + a destroy entry, then shredded: destroyed; no key in memory or items, nothing owed")
    func destroyed() throws {
        let (_, effects, state) = try TableRow.row("11").run(f)
        #expect(effects.vaultWrites == [.destroyKeys])
        #expect(state.phase == .destroyed)
        #expect(state.keys.isEmpty && state.owedDeliveries.isEmpty && !state.items.contains { $0.attributes.kind == .generationKey })
        guard case .destroyed = state.read(.current, withRelay: true).availability else { Issue.record("not destroyed"); return }
    }

    @Test("12. joining, a request made, then unlocked: pending awaiting-approval and waits; locked wins before")
    func joiningAwaits() throws {
        let (before, _, state) = try TableRow.row("12").run(f)
        guard case .locked = before.read(.current, withRelay: true).availability else { Issue.record("locked wins"); return }
        #expect(state.phase == .joining(since: f.t0, failed: false))
        let read = state.read(.current, withRelay: true)
        guard case .pending(.awaitingApproval, _) = read.availability else { Issue.record("\(read.availability)"); return }
        #expect(read.waits)
    }

    @Test("13. joining after a restart ended the exchange: pending code-mismatch (enroll again)")
    func joiningEnded() throws {
        let (_, _, state) = try TableRow.row("13").run(f)
        #expect(state.phase == .joining(since: f.t0, failed: true))
        guard case .pending(.codeMismatch, _) = state.read(.current, withRelay: true).availability else { Issue.record("not code-mismatch"); return }
    }

    @Test("14. member: a generation never announced is unknown, and waits only with a relay (it may be announced any moment)")
    func unknownWaitsWithRelay() throws {
        let (_, _, state) = try TableRow.row("14").run(f)
        let withRelay = state.read(.generation(9), withRelay: true)
        guard case .unknown = withRelay.availability else { Issue.record("\(withRelay.availability)"); return }
        #expect(withRelay.waits)
        #expect(!state.read(.generation(9), withRelay: false).waits)
    }

    @Test("15. member + this device revoked another: a rotation is owed, read from the log (so a crash cannot lose it); its announce turns it into a promotion")
    func revokeOwesRotation() throws {
        var (_, _, state) = try TableRow.row("15").run(f)
        #expect(state.circle.revokeDebt(signedBy: f.me.deviceID) == .rotate(revoked: f.other.deviceID))
        let next = SecretKey.generate()
        state = f.adopted(state, f.next(state, by: f.me, .announce(generation: 2, keyID: KeyID(of: next), keyCreatedAt: 0)))
        #expect(state.circle.revokeDebt(signedBy: f.me.deviceID) == .promote(keyID: KeyID(of: next)))
        state = f.adopted(state, f.next(state, by: f.me, .promote(generation: 2, keyID: KeyID(of: next))))
        #expect(state.circle.revokeDebt(signedBy: f.me.deviceID) == nil)
    }
}
