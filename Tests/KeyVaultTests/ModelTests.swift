import Foundation
import KeyVault
import KeyVaultEngine
import KeyVaultPolicy
import Testing
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultAccount
import KeyVaultVault
import KeyVaultRelay
import KeyVaultRelayClient
import KeyVaultRelayStore

@Suite("Model: pure values")
struct ModelTests {
    @Test("account IDs: charset and length", arguments: [
        ("a", true), ("A.b_c-9", true), (String(repeating: "x", count: 128), true),
        ("", false), (String(repeating: "x", count: 129), false), ("../x", false), ("a/b", false),
        ("caf\u{e9}", false), ("a b", false), ("a\u{0}", false), ("%2e", false),
    ])
    func accountIDs(raw: String, valid: Bool) {
        #expect(((try? AccountID(validating: raw)) != nil) == valid)
    }

    @Test("the unlock back-off doubles from its base up to its maximum")
    func backoff() {
        #expect(UnlockThrottle.delaySeconds(afterFailures: 0, base: 1, max: 900) == 0)
        #expect(UnlockThrottle.delaySeconds(afterFailures: 1, base: 1, max: 900) == 1)
        #expect(UnlockThrottle.delaySeconds(afterFailures: 2, base: 1, max: 900) == 2)
        #expect(UnlockThrottle.delaySeconds(afterFailures: 5, base: 1, max: 900) == 16)
        #expect(UnlockThrottle.delaySeconds(afterFailures: 40, base: 1, max: 900) == 900)
        let start = Date(timeIntervalSince1970: 1000)
        let once = UnlockThrottle(failures: 0, until: .distantPast).failed(at: start, base: 2, max: 60)
        #expect(once.retryAfter(at: start) == 2)
        #expect(once.retryAfter(at: start.addingTimeInterval(2)) == nil)
        #expect(once.failed(at: start, base: 2, max: 60).retryAfter(at: start) == 4)
    }

    @Test("key availability: ready, locked, unknown, destroyed, revoked, pending and why")
    func availability() throws {
        let gens = [
            KeyGeneration(number: 1, keyID: KeyID(testHex: String(repeating: "a", count: 32)), createdAt: Date(), state: .active),
            KeyGeneration(number: 2, keyID: KeyID(testHex: String(repeating: "b", count: 32)), createdAt: Date(), state: .destroyed),
        ]
        let account = try AccountID(validating: "m")
        let key = SecretKey.generate()
        let held: (KeyGeneration) -> ReleasedKey? = { g in g.number == 1 ? ReleasedKey(account: account, generation: gens[0], key: key, isCurrent: true) : nil }
        let member = AccountPhase.member(since: Date(timeIntervalSince1970: 0))
        func decide(_ selector: KeySelector, _ held: (KeyGeneration) -> ReleasedKey?, locked: Bool = true, phase: AccountPhase = member) -> KeyAvailability {
            KeyAvailability.decide(selector: selector, generations: gens, current: gens[0].keyID, isLocked: locked, phase: phase, held: held)
        }
        guard case .ready = decide(.current, held) else { Issue.record("not ready"); return }
        guard case .locked = decide(.generation(1), { _ in nil }) else { Issue.record("not locked"); return }
        guard case .destroyed = decide(.generation(2), held) else { Issue.record("not destroyed"); return }
        guard case .unknown = decide(.generation(3), held) else { Issue.record("not unknown"); return }
        guard case .ready = decide(.keyID(KeyID(testHex: String(repeating: "a", count: 32))), held) else { Issue.record("by key ID"); return }
        guard case .unknown = decide(.keyID(KeyID(testHex: String(repeating: "c", count: 32))), held) else { Issue.record("unknown key ID"); return }
        // Unlocked but not held: waiting for a share, since the generation's creation.
        guard case .pending(.awaitingDelivery, _) = decide(.generation(1), { _ in nil }, locked: false) else { Issue.record("awaiting delivery"); return }
        // Asked to join, not approved: pending with that reason, whatever is asked; locked still wins.
        let asked = AccountPhase.joining(since: Date(timeIntervalSince1970: 5), failed: false)
        guard case .pending(.awaitingApproval, let since) = decide(.current, held, locked: false, phase: asked) else { Issue.record("awaiting approval"); return }
        #expect(since == Date(timeIntervalSince1970: 5))
        guard case .locked = decide(.current, held, locked: true, phase: asked) else { Issue.record("locked wins"); return }
        // Founded here, genesis not on the relay yet: even a key held here waits for it; locked still wins.
        let founding = AccountPhase.founding(since: Date(timeIntervalSince1970: 7))
        guard case .pending(.awaitingRelay, let created) = decide(.current, held, locked: false, phase: founding) else { Issue.record("awaiting relay"); return }
        #expect(created == Date(timeIntervalSince1970: 7))
        guard case .locked = decide(.current, held, locked: true, phase: founding) else { Issue.record("locked wins over founding"); return }
        guard case .revoked = decide(.current, { _ in nil }, locked: false, phase: .revoked) else { Issue.record("revoked"); return }
        // A removed device still reads what it held, but not "current" (the circle rotated at its removal,
        // and it is told nothing after), nor a generation or key ID it never heard of.
        guard case .ready = decide(.generation(1), held, locked: false, phase: .revoked) else { Issue.record("revoked keeps held keys"); return }
        guard case .ready = decide(.keyID(KeyID(testHex: String(repeating: "a", count: 32))), held, locked: false, phase: .revoked) else { Issue.record("revoked keeps held keys by ID"); return }
        guard case .revoked = decide(.current, held, locked: false, phase: .revoked) else { Issue.record("revoked: current"); return }
        guard case .revoked = decide(.generation(3), held, locked: false, phase: .revoked) else { Issue.record("revoked: later generation"); return }
        guard case .revoked = decide(.keyID(KeyID(testHex: String(repeating: "c", count: 32))), held, locked: false, phase: .revoked) else { Issue.record("revoked: unknown key ID"); return }
    }

    @Test("durations as people write them")
    func durations() {
        #expect(DurationText.seconds("500ms") == 0.5)
        #expect(DurationText.seconds("1.5s") == 1.5)
        #expect(DurationText.seconds("5m") == 300)
        #expect(DurationText.seconds("2h") == 7200)
        #expect(DurationText.seconds("90d") == 7_776_000.0)
        #expect(DurationText.seconds("fast") == nil)
        #expect(DurationText.seconds("-1s") == nil)
        #expect(DurationText.seconds("10") == nil)
        // Bounded where it is read: `keyvault drill rotate --deadline 1e16s` trapped turning it into milliseconds.
        #expect(DurationText.seconds("1e16s") == nil)
        #expect(DurationText.seconds("99999999999999999999h") == nil)
        #expect(DurationText.seconds("11574d") == 999_993_600)
        #expect(DurationText.seconds("11575d") == nil)
    }

    @Test("RFC 3339 UTC with milliseconds")
    func rfc3339() {
        #expect(RFC3339.string(from: Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
        #expect(RFC3339.string(from: Date(timeIntervalSince1970: 1_795_304_804.706)) == "2026-11-21T23:46:44.706Z")
        #expect(RFC3339.string(from: Date(timeIntervalSince1970: 951_782_400.5)) == "2000-02-29T00:00:00.500Z")
    }
}
