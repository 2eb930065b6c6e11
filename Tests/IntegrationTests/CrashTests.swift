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

@Suite("Crashes lose nothing", .serialized)
struct CrashTests {
    /// SIGKILL lands at a random moment of a passphrase change, 50 times.
    /// Each time the vault must open with exactly one of the two passphrases,
    /// and every secret under it must be the one created at the start.
    @Test("SIGKILL during passphrase changes, 50 times")
    func killDuringPassphraseChanges() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        try await daemon.start()
        #expect(try await daemon.request("POST", "/v1/accounts", json: ["user": "crash", "passphrase": "pass-0"]).status == 200)
        let key = try #require(try await daemon.request("GET", "/v1/accounts/crash/keys/current")["key"])
        var current = "pass-0"
        var changesThatLanded = 0
        var killsMidway = 0

        for round in 1...50 {
            let next = "pass-\(round)"
            let old = current
            let request = Task { try? await daemon.request("POST", "/v1/accounts/crash/passphrase", json: ["old": old, "new": next]) }
            try await Task.sleep(for: .microseconds(Int.random(in: 0...12_000)))
            await daemon.kill9()
            let reply = await request.value
            if reply == nil { killsMidway += 1 }

            let opensWith = try VaultCheck.passphrasesThatOpen(daemon.dataDirectory, account: "crash", candidates: [current, next])
            #expect(opensWith.count == 1, "round \(round): the vault opens with \(opensWith)")
            guard let survivor = opensWith.first else { break }
            #expect(try VaultCheck.currentKey(daemon.dataDirectory, account: "crash", passphrase: survivor) == key, "round \(round)")
            if reply?.status == 200 { #expect(survivor == next, "round \(round): an acknowledged change was lost") }
            if survivor == next { changesThatLanded += 1 }
            current = survivor
            try await daemon.start()
        }
        // The daemon itself opens the survivor and serves the same key.
        #expect(try await daemon.request("POST", "/v1/accounts/crash/unlock", json: ["passphrase": current]).status == 200)
        #expect(try await daemon.request("GET", "/v1/accounts/crash/keys/current")["key"] == key)
        print("crash test: \(changesThatLanded) of 50 changes landed; \(killsMidway) kills before an answer")
    }
}

/// Reads the vault directly through the library, as an operator's tool would.
enum VaultCheck {
    static func passphrasesThatOpen(_ directory: String, account: String, candidates: [String]) throws -> [String] {
        let snapshot = try #require(try Vault(directory: directory).snapshot(of: AccountID(validating: account)))
        return try candidates.filter { candidate in
            let kek = try PasswordKDF.deriveKey(passphrase: SecureBytes(copying: Array(candidate.utf8)),
                                                salt: snapshot.account.salt, parameters: snapshot.account.kdf)
            let opened = snapshot.items.filter { (try? WrappedSecret.unwrap($0.wrapped, under: kek, context: $0.context)) != nil }
            // All items or none: a half re-wrapped vault would show here.
            #expect(opened.isEmpty || opened.count == snapshot.items.count)
            return opened.count == snapshot.items.count
        }
    }

    static func currentKey(_ directory: String, account: String, passphrase: String) throws -> String? {
        let snapshot = try #require(try Vault(directory: directory).snapshot(of: AccountID(validating: account)))
        let kek = try PasswordKDF.deriveKey(passphrase: SecureBytes(copying: Array(passphrase.utf8)),
                                            salt: snapshot.account.salt, parameters: snapshot.account.kdf)
        guard let item = snapshot.items.first(where: { $0.attributes.kind == .generationKey && $0.attributes.generation == snapshot.account.currentGeneration?.value }) else { return nil }
        return try WrappedSecret.unwrap(item.wrapped, under: kek, context: item.context).base64EncodedString()
    }
}

@Suite("Rotation survives crashes", .serialized)
struct RotationCrashTests {
    /// SIGKILL lands at a random moment of a rotation on A, 50 times. After
    /// each restart, every generation either device ever served is still
    /// readable with the same bytes, and both devices verify the same log.
    @Test("SIGKILL during rotations, 50 times")
    func killDuringRotations() async throws {
        let circle = try await Circle()
        defer { circle.remove() }
        let a = try await circle.device()
        let b = try await circle.device()
        _ = try await a.request("POST", "/v1/accounts", json: ["user": "rc", "passphrase": "pa"])
        try await circle.enroll(b, into: "rc", approver: a, name: "b")
        var served: [Int: String] = [:]
        guard let first = try await b.request("GET", "/v1/accounts/rc/keys/1?wait=20")["key"] else {
            Issue.record("B never got generation 1")
            return
        }
        served[1] = first

        for round in 1...50 {
            let request = Task { try? await a.request("POST", "/v1/accounts/rc/rotate", json: ["promote": "now"]) }
            try await Task.sleep(for: .microseconds(Int.random(in: 0...15_000)))
            await a.kill9()
            _ = await request.value
            try await a.start()
            #expect(try await a.request("POST", "/v1/accounts/rc/unlock", json: ["passphrase": "pa"]).status == 200, "round \(round)")
            // Everything either device served before is served the same now.
            for (generation, key) in served {
                #expect(try await a.request("GET", "/v1/accounts/rc/keys/\(generation)")["key"] == key, "round \(round): A, generation \(generation)")
            }
            // A "now" promotion cut by the kill is owed, and paid at the unlock: nothing announced stays unpromoted.
            try await eventually {
                guard let generation = try await a.request("GET", "/v1/accounts/rc/keys/current").object["generation"] as? Int else { return false }
                return try await a.request("GET", "/v1/accounts/rc/keys/\(generation + 1)").status == 404
            }
            // What A serves now, B gets too, byte for byte.
            let current = try await a.request("GET", "/v1/accounts/rc/keys/current")
            let generation = try #require(current.object["generation"] as? Int)
            let key = try #require(current["key"])
            if let earlier = served[generation] { #expect(earlier == key, "round \(round)") }
            served[generation] = key
            #expect(try await b.request("GET", "/v1/accounts/rc/keys/\(generation)?wait=20")["key"] == key, "round \(round): B")
        }
        // Both devices verified the same log: they list the same devices and generations.
        let generationsA = try await a.request("GET", "/v1/accounts/rc/devices").object["devices"] as? [[String: Any]] ?? []
        #expect(generationsA.count == 2)
        for (generation, key) in served {
            #expect(try await b.request("GET", "/v1/accounts/rc/keys/\(generation)?wait=20")["key"] == key)
        }
        #expect(!a.logText().contains("refused relay record"))
        #expect(!b.logText().contains("refused relay record"))
        print("rotation crash test: \(served.count) generations served")
    }

    /// SIGKILL lands at a random moment of a revoke or of a `promote: now` rotation on A, 100 times
    /// in all (issue 22). After each restart: A's current key is a new one, nothing announced stays
    /// unpromoted, every remaining device (B, C) gets that same current key, and a revoked device does
    /// not. Each revoke needs a freshly enrolled victim (a daemon started and paired, about as costly as
    /// the kill and restart together): so 30 of the 100 rounds are revokes, 70 `promote: now`
    /// rotations, in an order the seed shuffles. The seed (KEYVAULT_CRASH_SEED to set it) replays the
    /// plan and the kill delays; every failure names it.
    @Test("100 kills at random moments of revokes and promote-now rotations: every remaining device holds a new current key, the revoked one does not")
    func killDuringRevokesAndRotations() async throws {
        let seed = ProcessInfo.processInfo.environment["KEYVAULT_CRASH_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
        var rng = SplitMix64(seed: seed)
        let account = "rr"
        let circle = try await Circle()
        defer { circle.remove() }
        let a = try await circle.device()
        let b = try await circle.device()
        let c = try await circle.device()
        try #require(try await a.request("POST", "/v1/accounts", json: ["user": account, "passphrase": "pa"]).status == 200)
        try await circle.enroll(b, into: account, approver: a, name: "b")
        try await circle.enroll(c, into: account, approver: a, name: "c")
        let first = try #require(try await a.request("GET", "/v1/accounts/\(account)/keys/1")["key"])
        let remaining = [("B", b), ("C", c)]
        for (name, device) in remaining {
            try #require(try await device.request("GET", "/v1/accounts/\(account)/keys/1?wait=30")["key"] == first, "\(name) never got generation 1")
        }

        var plan = Array(repeating: true, count: 30) + Array(repeating: false, count: 70)  // true: a revoke
        plan.shuffle(using: &rng)
        for (index, revokes) in plan.enumerated() {
            let round = index + 1
            let at = "seed \(seed), round \(round) (\(revokes ? "revoke" : "promote now"))"
            let before = try await Self.settledCurrent(a, account, "\(at): A before the round")

            var victim: Victim?
            if revokes {
                let x = try await circle.device()
                let xID = try await circle.enroll(x, into: account, approver: a, name: "x\(round)")
                let atX = try await x.request("GET", "/v1/accounts/\(account)/keys/current?wait=30")
                let held = try #require(atX["key"], "\(at): X got no current key: \(atX.object)")
                try #require(atX["keyId"] == before.keyId, "\(at): X holds another current key than A: \(atX.object)")
                // What X could ever read: every generation announced before its revocation (as A and X know them).
                let couldRead = try await Self.generationKeyIDs(a, account).union(try await Self.generationKeyIDs(x, account))
                try #require(couldRead.contains(before.keyId) && couldRead.count == before.generation, "\(at): \(couldRead.count) key IDs")
                victim = Victim(daemon: x, id: xID, couldRead: couldRead, held: held)
            }

            let request: Task<Reply?, Never>
            if let victim {
                let id = victim.id
                request = Task { try? await a.request("DELETE", "/v1/accounts/\(account)/devices/\(id)") }
            } else {
                request = Task { try? await a.request("POST", "/v1/accounts/\(account)/rotate", json: ["promote": "now"]) }
            }
            try await Task.sleep(for: .microseconds(Int.random(in: 0...20_000, using: &rng)))
            await a.kill9()
            let reply = await request.value
            // An answer that came before the kill is the whole answer: a success.
            let acknowledged = reply?.status == 200
            try #require(reply == nil || acknowledged, "\(at): answered \(reply?.raw.text ?? "")")
            try await a.start()
            try #require(try await a.request("POST", "/v1/accounts/\(account)/unlock", json: ["passphrase": "pa"]).status == 200, "\(at): unlock")

            var now: CurrentKey
            if let victim {
                // A kill before the revoke entry was stored leaves X trusted: the person revokes again.
                let status = try await Self.deviceStatus(victim.id, on: a, account)
                if status == "trusted" {
                    try #require(!acknowledged, "\(at): an acknowledged revoke was lost")
                    let again = try await a.request("DELETE", "/v1/accounts/\(account)/devices/\(victim.id)")
                    try #require(again.status == 200, "\(at): revoking again: \(again.object)")
                    try #require(again.object["rotatedTo"] as? Int == before.generation + 1, "\(at): revoking again: \(again.object)")
                } else {
                    try #require(status == "revoked", "\(at): X is \(status ?? "not listed") on A")
                }
                try #require(try await Self.deviceStatus(victim.id, on: a, account) == "revoked", "\(at): X is not revoked on A")
                let log = try await Self.exported(a, account)["circleLog"] as? [[String: Any]] ?? []
                try #require(log.contains { $0["kind"] as? String == "revoke" && $0["subject"] as? String == victim.id }, "\(at): no revoke of X in A's log")
                // The rotation a revoke owes is paid at the unlock: A's current key is one X could never read.
                let couldRead = victim.couldRead
                now = try await Self.settledCurrent(a, account, "\(at): A serves a key X could read") { !couldRead.contains($0.keyId) }
                if acknowledged {
                    try #require(reply?.object["rotatedTo"] as? Int == now.generation, "\(at): acknowledged \(reply?.raw.text ?? ""), current \(now.generation)")
                }
            } else {
                // A "now" promotion cut by the kill is owed, and paid at the unlock: nothing announced stays unpromoted.
                now = try await Self.settledCurrent(a, account, "\(at): A")
                if acknowledged {
                    try #require(now.keyId == reply?["keyId"], "\(at): an acknowledged rotation is not current: \(reply?.raw.text ?? "")")
                }
                if now.keyId == before.keyId {
                    // The kill came before the announce: nothing was announced, so the person rotates again.
                    let again = try await a.request("POST", "/v1/accounts/\(account)/rotate", json: ["promote": "now"])
                    try #require(again.status == 200 && again.object["promoted"] as? Bool == true, "\(at): rotating again: \(again.object)")
                    now = try await Self.settledCurrent(a, account, "\(at): A after rotating again")
                    try #require(now.keyId == again["keyId"], "\(at): rotated again to \(again.object), current \(now.keyId)")
                }
            }
            let current = now
            try #require(current.generation == before.generation + 1, "\(at): generation \(current.generation) after \(before.generation)")
            try #require(current.keyId != before.keyId && current.key != before.key, "\(at): the current key did not change")

            // Every remaining device gets that key, and makes it current.
            for (name, device) in remaining {
                let arrived = try await device.request("GET", "/v1/accounts/\(account)/keys/id/\(current.keyId)?wait=30")
                try #require(arrived["key"] == current.key, "\(at): \(name) did not get A's current key: \(arrived.object)")
                _ = try await Self.settledCurrent(device, account, "\(at): \(name)'s current key is not A's") { $0.keyId == current.keyId }
            }
            // The revoked device learns it was removed, and is not given the key.
            if let victim {
                let x = victim.daemon
                try #require(current.key != victim.held)
                let asked = try await x.request("GET", "/v1/accounts/\(account)/keys/id/\(current.keyId)?wait=30")
                try #require(asked.status == 403 && asked.state == "revoked" && asked["key"] == nil, "\(at): X answered \(asked.object)")
                let atX = try await x.request("GET", "/v1/accounts/\(account)/keys/current")
                try #require(atX.state == "revoked" && atX["key"] == nil && !atX.raw.text.contains(current.key), "\(at): X answered \(atX.object)")
                try #require(try await x.request("GET", "/v1/accounts/\(account)/keys/\(current.generation)")["key"] == nil, "\(at): X")
                x.remove()
            }
        }

        // One generation per round, one revoke entry per revoke round.
        let export = try await Self.exported(a, account)
        #expect((export["generations"] as? [[String: Any]])?.count == 1 + plan.count, "seed \(seed)")
        let revokeEntries = (export["circleLog"] as? [[String: Any]] ?? []).filter { $0["kind"] as? String == "revoke" }
        #expect(revokeEntries.count == plan.filter { $0 }.count, "seed \(seed)")
        for (name, device) in [("A", a), ("B", b), ("C", c)] {
            // A revoked device's old acknowledgements are refused when read again (its word no longer counts): not these.
            let refusals = device.logText().split(separator: "\n").filter { $0.contains("refused relay record") && !$0.contains("kind=ack") }
            #expect(refusals.isEmpty, "seed \(seed), \(name): \(refusals.joined(separator: "\n"))")
        }
    }

    typealias CurrentKey = (generation: Int, keyId: String, key: String)

    /// A device to revoke: what it could read before its revocation (key IDs), and the current key it held.
    struct Victim {
        let daemon: DaemonProcess
        let id: String
        let couldRead: Set<String>
        let held: String
    }

    /// SplitMix64: a small seeded generator, so a run's plan and kill delays can be replayed from its seed.
    struct SplitMix64: RandomNumberGenerator {
        private var state: UInt64
        init(seed: UInt64) { state = seed }
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// `device`'s current key once nothing it knows of is announced and unpromoted (the generation
    /// after its current one is unknown there) and `accepts` takes it. Polled: a promotion or rotation
    /// the kill left owed is paid by a job the unlock queues, and a promote entry can reach another
    /// device after its share. The bound is generous (it is milliseconds when all is well); past it,
    /// the test stops with `what`.
    static func settledCurrent(_ device: DaemonProcess, _ account: String, _ what: String, within seconds: Int = 60,
                               accepts: (CurrentKey) -> Bool = { _ in true }) async throws -> CurrentKey {
        let end = ContinuousClock.now + .seconds(seconds)
        while true {
            let reply = try await device.request("GET", "/v1/accounts/\(account)/keys/current")
            if let generation = reply.object["generation"] as? Int, let keyId = reply["keyId"], let key = reply["key"] {
                let current: CurrentKey = (generation: generation, keyId: keyId, key: key)
                if accepts(current) {
                    let next = try await device.request("GET", "/v1/accounts/\(account)/keys/\(generation + 1)")
                    if next.status == 404 { return current }
                }
            }
            guard ContinuousClock.now < end else {
                throw TestFailure("\(what): not settled within \(seconds) s; keys/current answers \(reply.raw.text)")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    static func exported(_ device: DaemonProcess, _ account: String) async throws -> [String: Any] {
        let reply = try await device.request("GET", "/v1/accounts/\(account)/export")
        return try #require(reply.object["export"] as? [String: Any], "export: \(reply.object)")
    }

    /// The key IDs of every generation `device` knows of.
    static func generationKeyIDs(_ device: DaemonProcess, _ account: String) async throws -> Set<String> {
        let generations = try await exported(device, account)["generations"] as? [[String: Any]] ?? []
        return Set(generations.compactMap { $0["keyId"] as? String })
    }

    static func deviceStatus(_ deviceID: String, on device: DaemonProcess, _ account: String) async throws -> String? {
        let devices = try await device.request("GET", "/v1/accounts/\(account)/devices").object["devices"] as? [[String: Any]] ?? []
        return devices.first { $0["deviceId"] as? String == deviceID }?["status"] as? String
    }
}
