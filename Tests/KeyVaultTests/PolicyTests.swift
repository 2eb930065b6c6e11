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

@Suite("Policy: parsing, errors with file and line, decisions")
struct PolicyTests {
    @Test("the shipped policy/ is exactly the built-in default")
    func shippedEqualsBuiltIn() throws {
        let policy = try PolicyLoader.load(directory: Vectors.repositoryRoot.path + "/policy", selfUID: 4242)
        var expected = Policy.builtInDefault(selfUID: 4242)
        expected.rules[0].source = policy.rules[0].source
        #expect(policy == expected)
        #expect(policy.kdf == .moderate)
    }

    @Test("errors name the file, the line and the problem", arguments: [
        ("[[rule]]\nuid = \"self\"\naccounts = [\"*\"]\nallow = [\"read\", \"raed\"]\n", "p.toml:4: unknown permission 'raed'"),
        ("[kdf]\npasses = 0\n", "p.toml:2: 'passes' must be between 1 and 64, got 0"),
        ("[kdf]\nmemroy_mib = 64\n", "p.toml:2: unknown setting 'memroy_mib' in [kdf]"),
        ("[kfd]\n", "p.toml:1: unknown table [kfd]"),
        ("[enrollment]\nrequest_lifetime_seconds = 0\n", "p.toml:2: 'request_lifetime_seconds' must be between 1 and 604800, got 0"),
        ("[[rule]]\nuid = \"self\"\naccounts = [\"*\"\n", "p.toml:4: expected ',' or ']' in a list"),
        ("[[rule]]\nuid = \"self\"\naccounts = [\"*\"]\n", "p.toml:1: 'allow' is missing"),
        ("[[rule]]\naccounts = [\"*\"]\nallow = [\"*\"]\n", "p.toml:1: a [[rule]] must name a uid or a gid"),
        ("[[rule]]\nuid = \"no-such-user-here\"\naccounts = [\"*\"]\nallow = [\"*\"]\n", "p.toml:2: no user named"),
        ("[[rule]]\nuid = \"self\"\naccounts = [\"../x\"]\nallow = [\"*\"]\n", "p.toml:3: '../x' is not an account ID"),
        ("[limits]\nmax_wait_seconds = \"long\"\n", "p.toml:2: 'max_wait_seconds' must be a whole number"),
        ("[limits]\nmax_wait_seconds = 5\nmax_wait_seconds = 6\n", "p.toml:3: 'max_wait_seconds' is set twice"),
        ("x = 1\n", "p.toml:1: 'x' must be inside a table"),
        ("[kdf]\npasses = 3 junk\n", "p.toml:2: unexpected text"),
        ("[kdf]\n", "p.toml: the policy has no [[rule]]"),
        // Nesting is bounded where it is read: 5,000 `[` overflowed the stack (a crash at start and at SIGHUP).
        ("[[rule]]\nuid = \"self\"\naccounts = " + String(repeating: "[", count: 5_000) + "\n", "p.toml:3: lists nested more than 16 deep"),
    ])
    func errors(text: String, expected: String) {
        do {
            _ = try PolicyLoader.parse(text, file: "p.toml", selfUID: 1000)
            Issue.record("accepted: \(text)")
        } catch {
            #expect(error.description.hasPrefix(expected), "got: \(error.description)")
        }
    }

    @Test("the timed settings read from their tables: the back-off, rotation and enrollment lifetimes (what EngineClockTests runs on)")
    func timedSettings() throws {
        let policy = try PolicyLoader.parse("""
            [unlock-backoff]
            base_seconds = 30
            max_seconds = 600

            [rotation]
            max_key_age_seconds = 3600
            promotion_deadline_seconds = 7200

            [enrollment]
            request_lifetime_seconds = 120

            [[rule]]
            uid = "self"
            accounts = ["*"]
            allow = ["*"]
            """, file: "p.toml", selfUID: 1000)
        #expect(policy.backoff.baseSeconds == 30 && policy.backoff.maxSeconds == 600)
        #expect(policy.rotation.maxKeyAgeSeconds == 3600)
        #expect(policy.rotation.promotionDeadlineSeconds == 7200)
        #expect(policy.enrollment.requestLifetimeSeconds == 120)
        let defaults = try PolicyLoader.parse("[[rule]]\nuid = \"self\"\naccounts = [\"*\"]\nallow = [\"*\"]\n", file: "p.toml", selfUID: 1000)
        #expect(defaults.rotation.maxKeyAgeSeconds == 0 && defaults.rotation.promotionDeadlineSeconds == 86_400)
        #expect(defaults.enrollment.requestLifetimeSeconds == 3600)
    }

    @Test("decisions: uid, gid, account patterns, permissions")
    func decisions() throws {
        let policy = try PolicyLoader.parse("""
            [[rule]]
            uid = "self"
            accounts = ["*"]
            allow = ["*"]

            [[rule]]
            uid = 2000           # a sync engine
            accounts = ["app-*", "exact"]
            allow = ["read", "wait"]

            [[rule]]
            gid = "3000"
            accounts = ["*"]
            allow = ["health"]
            """, file: "p.toml", selfUID: 1000)
        let me = PeerCredentials(uid: 1000, gid: 1000, pid: 1)
        let engine = PeerCredentials(uid: 2000, gid: 2000, pid: 2)
        let grouped = PeerCredentials(uid: 5000, gid: 3000, pid: 3)
        let stranger = PeerCredentials(uid: 6000, gid: 6000, pid: 4)
        let appUser = try AccountID(validating: "app-user1")
        let exact = try AccountID(validating: "exact")
        let other = try AccountID(validating: "exactly")
        #expect(policy.allows(me, .delete, account: other))
        #expect(policy.allows(engine, .read, account: appUser))
        #expect(policy.allows(engine, .wait, account: exact))
        #expect(!policy.allows(engine, .read, account: other))
        #expect(!policy.allows(engine, .unlock, account: appUser))
        #expect(policy.allows(grouped, .health, account: nil))
        #expect(!policy.allows(grouped, .read, account: appUser))
        for permission in Permission.allCases { #expect(!policy.allows(stranger, permission, account: appUser)) }
    }

    @Test("literal strings ('…', TOML's) read as the basic strings they spell, in values, lists and keys")
    func literalStrings() throws {
        let basic = try PolicyLoader.parse("""
            [[rule]]
            uid = "self"
            accounts = ["*"]
            allow = ["read", "wait"]
            """, file: "p.toml", selfUID: 1000)
        let literal = try PolicyLoader.parse("""
            [[rule]]
            'uid' = 'self'
            accounts = ['*']
            allow = [ 'read',"wait" ]   # both kinds in one list
            """, file: "p.toml", selfUID: 1000)
        #expect(literal == basic)
        let me = PeerCredentials(uid: 1000, gid: 1000, pid: 1)
        #expect(literal.allows(me, .read, account: try AccountID(validating: "anyone")))
        #expect(!literal.allows(me, .delete, account: try AccountID(validating: "anyone")))
    }

    /// What a string held shows in the error about its value: `'` inside "…", `"` and `\` inside '…' (no escape).
    @Test("quotes of the other kind, and backslashes in literal strings, are kept as written", arguments: [
        (#"accounts = ["o'brien"]"#, "p.toml:3: 'o'brien' is not an account ID"),
        (#"accounts = ['say"hi"']"#, #"p.toml:3: 'say"hi"' is not an account ID"#),
        (#"accounts = ['a\n']"#, #"p.toml:3: 'a\n' is not an account ID"#),
    ])
    func quotesInStrings(line: String, expected: String) {
        let text = "[[rule]]\nuid = \"self\"\n\(line)\nallow = [\"*\"]\n"
        do {
            _ = try PolicyLoader.parse(text, file: "p.toml", selfUID: 1000)
            Issue.record("accepted: \(text)")
        } catch {
            #expect(error.description.hasPrefix(expected), "got: \(error.description)")
        }
    }

    @Test("a malformed literal string is refused with its line and why", arguments: [
        ("accounts = ['*]", "p.toml:3: a 'literal string' is not closed on its line"),
        ("accounts = ['it's']", "p.toml:3: expected ',' or ']' in a list"),
        (#"accounts = ['it\'s']"#, "p.toml:3: expected ',' or ']' in a list"),
        ("accounts = '''*'''", "p.toml:3: multi-line literal strings"),
        ("accounts = ['*\u{1}']", "p.toml:3: a 'literal string' holds a control character"),
    ])
    func malformedLiteralStrings(line: String, expected: String) {
        let text = "[[rule]]\nuid = \"self\"\n\(line)\nallow = [\"*\"]\n"
        do {
            _ = try PolicyLoader.parse(text, file: "p.toml", selfUID: 1000)
            Issue.record("accepted: \(text)")
        } catch {
            #expect(error.description.hasPrefix(expected), "got: \(error.description)")
        }
    }
}
