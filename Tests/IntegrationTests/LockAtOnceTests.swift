import Foundation
import Synchronization
import Testing

/// Issue 34: a lock never waits on the relay. Another process holds the embedded
/// relay file's write lock while the device rotates (the rotation's publish waits
/// on it); the device's lock is answered while that rotation is still waiting, and
/// nothing the rotation finishes afterwards puts a key back in memory.
@Suite("A lock is answered at once, whatever the account's jobs wait on")
struct LockAtOnceTests {
    @Test("a lock during a rotation stuck on a held relay file answers before the rotation, and stays locked after it")
    func lockDuringStuckRotation() async throws {
        let circle = try await Circle()
        defer { circle.remove() }
        let path = circle.root + "/relay.sqlite"
        let a = try await circle.device()
        #expect(try await a.request("POST", "/v1/accounts", json: ["user": "stuck", "passphrase": "pa", "accessibility": "whenUnlocked"]).status == 200)
        #expect(try await a.request("GET", "/v1/accounts/stuck/keys/current").status == 200)

        // Another process takes the relay file's write lock and keeps it until told.
        let holder = try WriteLockHolder(path: path)
        defer { holder.release() }
        try await holder.waitUntilHeld()

        let rotation = Task { try await a.request("POST", "/v1/accounts/stuck/rotate", json: ["promote": "now"]) }
        // The rotation's job is over and its publish waits on the held file, outside the account's line, before the lock is sent.
        try await eventually { try await Self.publishes(a) > 0 }
        let locked = try await a.request("POST", "/v1/accounts/stuck/lock")
        #expect(locked.status == 200, "\(locked.object)")
        // Answered while the rotation's publish still waits on the relay: the lock did not wait for it.
        #expect(try await Self.publishes(a) > 0, "the lock was answered only once the publish waiting on the relay had ended")
        #expect(try await a.request("GET", "/v1/accounts/stuck/keys/current").status == 423)

        holder.release()
        let rotated = try await rotation.value
        #expect([200, 423].contains(rotated.status), "\(rotated.object)")
        // Whatever the rotation finished after the lock, no key is readable until an unlock.
        let after = try await a.request("GET", "/v1/accounts/stuck/keys/current")
        #expect(after.status == 423, "\(after.object)")
        #expect(try await a.request("POST", "/v1/accounts/stuck/unlock", json: ["passphrase": "pa"]).status == 200)
        #expect(try await a.request("GET", "/v1/accounts/stuck/keys/current").status == 200)
    }

    /// The check: while the relay cannot be written, a lock, an unlock and a key read answer
    /// within 250 ms (the unlock within its KDF plus 250 ms: its own time on the idle account, measured
    /// first), all while the rotation's job still waits on the relay; the rotation completes once the
    /// relay is back, and its key is then the one read.
    @Test("while a rotation waits on a held relay file: lock, unlock and key reads answer at once, and the rotation lands after")
    func unlockAndReadsDuringStuckRotation() async throws {
        let circle = try await Circle()
        defer { circle.remove() }
        let path = circle.root + "/relay.sqlite"
        let a = try await circle.device()
        #expect(try await a.request("POST", "/v1/accounts", json: ["user": "stuck", "passphrase": "pa", "accessibility": "whenUnlocked"]).status == 200)
        let first = try await a.request("GET", "/v1/accounts/stuck/keys/current")
        #expect(first.status == 200)
        let firstGeneration = try #require(first.object["generation"] as? Int)
        // The unlock's own time on the idle account (its KDF): the baseline.
        #expect(try await a.request("POST", "/v1/accounts/stuck/lock").status == 200)
        let (idleUnlock, idleTime) = try await Self.timed { try await a.request("POST", "/v1/accounts/stuck/unlock", json: ["passphrase": "pa"]) }
        #expect(idleUnlock.status == 200)

        let holder = try WriteLockHolder(path: path)
        defer { holder.release() }
        try await holder.waitUntilHeld()
        let rotation = Answered { try await a.request("POST", "/v1/accounts/stuck/rotate", json: ["promote": "now"]) }
        try await eventually { try await Self.publishes(a) > 0 }

        // All of it while the rotation's publish still waits on the relay.
        try await Self.answersAtOnce(a, "stuck", kdfAlone: idleTime, while: "a held relay file") { !rotation.isAnswered }

        holder.release()
        let rotated = try await rotation.task.value
        #expect(rotated.status == 200, "\(rotated.object)")
        // The rotation landed (published once the relay was back): its key is current, the account unlocked throughout.
        try await eventually { try await Self.gauge("keyvault_daemon_relay_queued", of: a) == 0 }
        let now = try await a.request("GET", "/v1/accounts/stuck/keys/current")
        #expect(now.status == 200 && (now.object["generation"] as? Int ?? 0) > firstGeneration, "\(now.object)")
    }

    /// The same on the relay service, when it accepts connections and never answers (its
    /// processes stopped): the rotation's publish hangs, and the account's own operations do not.
    @Test("while a rotation waits on a relay service that accepts and never answers: lock, unlock and key reads answer at once")
    func unlockAndReadsWhileTheServiceHangs() async throws {
        let circle = try await Circle(.service)
        defer { circle.remove() }
        let a = try await circle.device()
        #expect(try await a.request("POST", "/v1/accounts", json: ["user": "hung", "passphrase": "pa", "accessibility": "whenUnlocked"]).status == 200)
        try await eventually { try await Self.gauge("keyvault_daemon_relay_queued", of: a) == 0 }
        #expect(try await a.request("POST", "/v1/accounts/hung/lock").status == 200)
        let (_, idleTime) = try await Self.timed { try await a.request("POST", "/v1/accounts/hung/unlock", json: ["passphrase": "pa"]) }

        for service in circle.store.services { service.process.signal(SIGSTOP) }
        // The rotation reads the relay first, then appends in its job, then publishes: both relay
        // requests hang (up to 10 s each before the device gives up), outside the account's line.
        let rotation = Answered { try await a.request("POST", "/v1/accounts/hung/rotate", json: ["promote": "now"]) }
        // Under way: the rotation's request and the scrape's own.
        try await eventually { try await Self.gauge("keyvault_daemon_requests_in_progress", of: a) >= 2 }
        try await Self.answersAtOnce(a, "hung", kdfAlone: idleTime, while: "a hung relay service") { !rotation.isAnswered }

        for service in circle.store.services { service.process.signal(SIGCONT) }
        _ = try await rotation.task.value
        // Whatever the rotation's own answer (it may have given up waiting), its work lands once the relay answers.
        try await eventually { try await Self.gauge("keyvault_daemon_relay_queued", of: a) == 0 }
        let status = try await a.request("GET", "/v1/accounts/hung/keys/current")
        #expect(status.status == 200 && (status.object["generation"] as? Int ?? 0) >= 2, "\(status.object)")
    }

    /// What waited in the vault goes out at a start outside the account's line: a daemon restarted
    /// while another process holds the relay file's write lock, with a rotation's entry still to
    /// publish, answers a lock, an unlock, key reads and a passphrase change (a job) at once while
    /// that publish waits; it lands once the file is free. Before, the start's publish was a job of
    /// the account and held its line (10 s per write before giving up), and so did the relay audit's
    /// job after the file was opened, which waited for that publish's turn.
    @Test("a daemon started while the relay file is held publishes what waited outside the account's line")
    func publishAtStartOutsideTheLine() async throws {
        let circle = try await Circle()
        defer { circle.remove() }
        let path = circle.root + "/relay.sqlite"
        let a = try await circle.device()
        #expect(try await a.request("POST", "/v1/accounts", json: ["user": "restarted", "passphrase": "pa", "accessibility": "whenUnlocked"]).status == 200)
        let first = try #require(try await a.request("GET", "/v1/accounts/restarted/keys/current").object["generation"] as? Int)
        #expect(try await a.request("POST", "/v1/accounts/restarted/lock").status == 200)
        let (_, idleTime) = try await Self.timed { try await a.request("POST", "/v1/accounts/restarted/unlock", json: ["passphrase": "pa"]) }

        let holder = try WriteLockHolder(path: path)
        defer { holder.release() }
        try await holder.waitUntilHeld()
        // The rotation's entry is in the vault and its publish waits on the held file when the daemon is killed.
        let rotation = Answered { try await a.request("POST", "/v1/accounts/restarted/rotate", json: ["promote": "now"]) }
        try await eventually { try await Self.publishes(a) > 0 }
        await a.kill9()
        _ = try? await rotation.task.value
        try await a.start()
        // The start's publish of the queued entry waits on the held file.
        try await eventually { try await Self.publishes(a) > 0 }
        try await Self.answersAtOnce(a, "restarted", kdfAlone: idleTime, while: "a held relay file at a start") {
            try await Self.publishes(a) > 0
        }

        holder.release()
        // Published once the file is free: the rotated key is the current one.
        try await eventually { try await Self.gauge("keyvault_daemon_relay_queued", of: a) == 0 }
        let now = try await a.request("GET", "/v1/accounts/restarted/keys/current")
        #expect(now.status == 200 && (now.object["generation"] as? Int ?? 0) > first, "\(now.object)")
    }

    /// A share's way in does not wait on the relay's writes: its acknowledgement goes to the relay
    /// outside the account's line. B, locked, keeps the shares of two rotations sealed; another
    /// process holds the relay file's write lock (10 s per write before it gives up); B unlocks and
    /// takes both keys, its line empty, while both acknowledgements still wait. Before, each
    /// share's acknowledgement held the account's job for the whole wait, the next share behind it.
    @Test("with the relay file's write lock held, an unlock takes every kept share at once; the acknowledgements reach the relay once it is free")
    func keptSharesTakenWhileTheRelayCannotBeWritten() async throws {
        let circle = try await Circle()
        defer { circle.remove() }
        let a = try await circle.device()
        let b = try await circle.device()
        #expect(try await a.request("POST", "/v1/accounts", json: ["user": "held", "passphrase": "pa"]).status == 200)
        let bID = try await circle.enroll(b, into: "held", approver: a)
        try await eventually { try await b.request("GET", "/v1/accounts/held/keys/current").status == 200 }
        #expect(try await b.request("POST", "/v1/accounts/held/lock").status == 200)
        for _ in 0..<2 {
            #expect(try await a.request("POST", "/v1/accounts/held/rotate", json: ["promote": "now"]).status == 200)
        }
        try await eventually { try await Self.gauge("keyvault_daemon_relay_queued", of: a) == 0 }

        let holder = try WriteLockHolder(path: circle.root + "/relay.sqlite")
        defer { holder.release() }
        try await holder.waitUntilHeld()
        #expect(try await b.request("POST", "/v1/accounts/held/unlock", json: ["passphrase": "device passphrase"]).status == 200)
        // Both keys, well inside one write's wait: the first share's acknowledgement did not hold the second back.
        try await HostileClientTests.eventuallyWithin(.seconds(5)) {
            try await b.request("GET", "/v1/accounts/held/keys/current").object["generation"] as? Int == 3
        }
        try await HostileClientTests.eventuallyWithin(.seconds(2)) { try await Self.jobsInLine(b) == 0 }
        // The acknowledgements cannot have reached the relay: handed outside the line, or queued in the vault.
        let waiting = try await Self.gauge("keyvault_daemon_relay_records_sending", of: b) + Self.gauge("keyvault_daemon_relay_queued", of: b)
        #expect(waiting > 0, "no acknowledgement waits while the relay cannot be written")

        holder.release()
        try await eventually {
            let devices = try await a.request("GET", "/v1/accounts/held/devices").object["devices"] as? [[String: Any]] ?? []
            let acknowledged = devices.first { $0["deviceId"] as? String == bID }?["generations"] as? [Int] ?? []
            return acknowledged.contains(2) && acknowledged.contains(3)
        }
        #expect(try await Self.gauge("keyvault_daemon_relay_records_sending", of: b) == 0)
    }

    /// What follows an unlock runs outside the account's line (the log read, the kept shares taken),
    /// but keeps its place: a recovery kit asked for the moment the unlock answers waits for it
    /// (`caughtUp`), so the key that arrived while the device was locked is in the kit. The race this
    /// closes is narrow here (the kit's own job usually queues behind the catch-up's): without the wait
    /// the test passed 3 runs of 3, so it checks the outcome, not the order.
    @Test("a recovery kit made the moment an unlock answers holds the key whose share arrived while locked")
    func kitRightAfterUnlockHoldsKeptKeys() async throws {
        let circle = try await Circle()
        defer { circle.remove() }
        let a = try await circle.device()
        let b = try await circle.device()
        #expect(try await a.request("POST", "/v1/accounts", json: ["user": "caught", "passphrase": "pa"]).status == 200)
        _ = try await circle.enroll(b, into: "caught", approver: a)
        try await eventually { try await b.request("GET", "/v1/accounts/caught/keys/current").status == 200 }
        #expect(try await b.request("POST", "/v1/accounts/caught/lock").status == 200)
        // B's event stream, live (a resumed stream is told resync at once) before A rotates.
        let events = b.client.events("caught", lastEventID: "from-elsewhere")
        let (ready, live) = AsyncStream<Void>.makeStream()
        let listening = Task { () -> Bool in
            var iterator = events.makeAsyncIterator()
            guard try await iterator.next()?.name == "resync" else { return false }
            live.yield()
            while let event = try await iterator.next() {
                if event.name == "rotated" && event.fields["generation"] == "2" { return true }
            }
            return false
        }
        defer { listening.cancel() }
        var readiness = ready.makeAsyncIterator()
        _ = await readiness.next()
        #expect(try await a.request("POST", "/v1/accounts/caught/rotate", json: ["promote": "now"]).status == 200)
        let second = try #require(try await a.request("GET", "/v1/accounts/caught/keys/2")["key"])
        // B, locked, reads the rotation (its event) and keeps the share that came in the same write sealed.
        let timeout = Task { try await Task.sleep(for: .seconds(15)); listening.cancel() }
        let heard = (try? await listening.value) ?? false
        timeout.cancel()
        #expect(heard, "B did not read the rotation while locked")

        #expect(try await b.request("POST", "/v1/accounts/caught/unlock", json: ["passphrase": "device passphrase"]).status == 200)
        let made = try await b.request("POST", "/v1/accounts/caught/recovery-kit", json: ["kitPassphrase": "kit passphrase"])
        let kit = try #require(made["kit"], "\(made.object)")

        let restored = try DaemonProcess()
        defer { restored.remove() }
        try await restored.start()
        let imported = try await restored.request("POST", "/v1/accounts/import", json: ["kit": kit, "kitPassphrase": "kit passphrase", "passphrase": "r"])
        #expect(imported.status == 200, "\(imported.object)")
        let kept = try await restored.request("GET", "/v1/accounts/caught/keys/2")
        #expect(kept["key"] == second, "the kit lacks generation 2: \(kept.object)")
    }

    /// A lock sent while an unlock's KDF runs wins: the unlock answers `locked` and no key is
    /// readable after both. (Before, the unlock sat in the account's line and the lock, sent
    /// after it, was made at once: the unlock then landed after it and left the account open.)
    @Test("a lock sent while an unlock's KDF runs wins: the unlock answers locked, and the account stays locked")
    func lockDuringUnlockWins() async throws {
        // A KDF with a real cost (64 MiB, 3 passes): the unlock is seen in progress before the lock goes.
        let a = try DaemonProcess(policy: DaemonProcess.testPolicy.replacingOccurrences(of: "memory_kib = 64", with: "memory_kib = 65536")
                                                                   .replacingOccurrences(of: "passes = 1", with: "passes = 3"))
        defer { a.remove() }
        try await a.start()
        #expect(try await a.request("POST", "/v1/accounts", json: ["user": "race", "passphrase": "pa", "accessibility": "whenUnlocked"]).status == 200)
        for _ in 0..<3 {
            #expect(try await a.request("POST", "/v1/accounts/race/lock").status == 200)
            let unlock = Task { try await a.request("POST", "/v1/accounts/race/unlock", json: ["passphrase": "pa"]) }
            // The unlock is in its KDF (the metrics request counts itself too).
            try await eventually { try await Self.gauge("keyvault_daemon_requests_in_progress", of: a) >= 2 }
            #expect(try await a.request("POST", "/v1/accounts/race/lock").status == 200)
            let answer = try await unlock.value
            #expect(answer.status == 423, "the unlock sent before the lock answered \(answer.status): \(answer.object)")
            #expect(try await a.request("GET", "/v1/accounts/race/keys/current").status == 423, "a key is readable after the lock")
        }
        // And an unlock sent after the lock opens the account as usual.
        #expect(try await a.request("POST", "/v1/accounts/race/unlock", json: ["passphrase": "pa"]).status == 200)
        #expect(try await a.request("GET", "/v1/accounts/race/keys/current").status == 200)
    }

    /// A lock, a key read (423), an unlock and a key read (200) on `account`, each within 250 ms (the
    /// unlock within `kdfAlone` plus 250 ms), all answered while a job still waits in the account's line.
    static func answersAtOnce(_ a: DaemonProcess, _ account: String, kdfAlone: Duration, while what: String,
                              stillWaiting: () async throws -> Bool) async throws {
        let (locked, lockTime) = try await timed { try await a.request("POST", "/v1/accounts/\(account)/lock") }
        #expect(locked.status == 200)
        let (lockedRead, lockedReadTime) = try await timed { try await a.request("GET", "/v1/accounts/\(account)/keys/current") }
        #expect(lockedRead.status == 423)
        let (unlocked, unlockTime) = try await timed { try await a.request("POST", "/v1/accounts/\(account)/unlock", json: ["passphrase": "pa"]) }
        #expect(unlocked.status == 200, "\(unlocked.object)")
        let (read, readTime) = try await timed { try await a.request("GET", "/v1/accounts/\(account)/keys/current") }
        #expect(read.status == 200, "\(read.object)")
        // A passphrase change is a job of the account (two KDF runs): the line is free, so it does not wait
        // for the rotation either. Before, the rotation's job held the line until its relay write ended.
        let (changed, changeTime) = try await timed {
            try await a.request("POST", "/v1/accounts/\(account)/passphrase", json: ["old": "pa", "new": "pb"])
        }
        #expect(changed.status == 200, "\(changed.object)")
        #expect(try await stillWaiting(), "the answers came only once the work waiting on the relay had ended")
        #expect(try await jobsInLine(a) == 0, "a job waits in the account's line while the relay does not answer")
        print("with \(what): lock \(lockTime), locked read \(lockedReadTime), unlock \(unlockTime) (its KDF alone: \(kdfAlone)), read \(readTime), passphrase change \(changeTime)")
        #expect(lockTime < .milliseconds(250) && lockedReadTime < .milliseconds(250) && readTime < .milliseconds(250))
        #expect(unlockTime < kdfAlone + .milliseconds(250), "unlock \(unlockTime), its KDF alone \(kdfAlone)")
        #expect(changeTime < kdfAlone * 2 + .milliseconds(250), "passphrase change \(changeTime), its KDF alone \(kdfAlone)")
    }

    /// `keyvault_daemon_relay_publishes`: relay writes of entries and shares under way or waiting their turn.
    static func publishes(_ daemon: DaemonProcess) async throws -> Int {
        try await gauge("keyvault_daemon_relay_publishes", of: daemon)
    }

    static func timed<T>(_ body: () async throws -> T) async throws -> (T, Duration) {
        let started = ContinuousClock.now
        let value = try await body()
        return (value, ContinuousClock.now - started)
    }

    /// `keyvault_daemon_account_jobs_queued`: jobs running or waiting in every account's line.
    static func jobsInLine(_ daemon: DaemonProcess) async throws -> Int {
        try await gauge("keyvault_daemon_account_jobs_queued", of: daemon)
    }

    static func gauge(_ name: String, of daemon: DaemonProcess) async throws -> Int {
        let metrics = try await daemon.request("GET", "/v1/metrics").raw.text
        // A gauge the daemon does not give is a failure, not a 0 (a misspelled name would pass every check for 0).
        guard let line = metrics.split(separator: "\n").first(where: { $0.hasPrefix(name + " ") }),
              let value = Double(line.split(separator: " ").last ?? "") else { throw TestFailure("no \(name) in the daemon's metrics") }
        return Int(value)
    }
}

/// A request under way, and whether it has been answered yet.
final class Answered<T: Sendable>: Sendable {
    let task: Task<T, any Error>
    private let done = Mutex(false)

    init(_ body: @escaping @Sendable () async throws -> T) {
        task = Task { try await body() }
        Task { [task, self] in
            _ = try? await task.value
            self.done.withLock { $0 = true }
        }
    }

    var isAnswered: Bool { done.withLock { $0 } }
}

/// A python3 process holding a SQLite file's write lock (`BEGIN IMMEDIATE`) until its stdin closes.
final class WriteLockHolder: @unchecked Sendable {
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()

    init(path: String) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", """
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1], timeout=30, isolation_level=None)
            db.execute("BEGIN IMMEDIATE")
            print("held", flush=True)
            sys.stdin.read()
            db.execute("COMMIT")
            """, path]
        process.standardInput = input
        process.standardOutput = output
        try process.run()
    }

    func waitUntilHeld() async throws {
        let line = await Task.detached { [output] in output.fileHandleForReading.availableData }.value
        guard String(decoding: line, as: UTF8.self).contains("held") else { throw TestFailure("the write lock was not taken") }
    }

    func release() {
        guard process.isRunning else { return }
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}
