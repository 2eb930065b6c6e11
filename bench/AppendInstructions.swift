import Foundation
import Logging
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultRelay
import KeyVaultRelayClient

/// Instructions the relay service runs per append, counted by callgrind: the same count for
/// the same binary and inputs whatever else the machine is doing, where CPU seconds are not.
/// One `keyvault-relay` on PostgreSQL under `valgrind --tool=callgrind`; one device of its own
/// account, as in "Appends through the relay service". After a warm-up, the counters are
/// zeroed, `count` appends (an announce and two shares, one signed request each) are made one
/// after another, and the counters dumped; then the same for `count` signed reads of the
/// account after its last row (each finds nothing): the baseline, what every signed request
/// pays before any append's own work. PostgreSQL's own work is not in these counts.
enum AppendInstructionsBench {
    struct Result {
        var count: Int
        var append: UInt64
        var read: UInt64
        /// What the functions of `parts` ran during the appends, with all they called.
        var top: [(name: String, instructions: UInt64)]
    }

    static func measure(count: Int, in directory: String, logger: Logger) async throws -> Result {
        let folder = directory + "/callgrind"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let launcher = ["/usr/bin/valgrind", "--tool=callgrind", "--callgrind-out-file=\(folder)/callgrind.out"]
        // valgrind 3.19 cannot read the DWARF 5 this toolchain writes: it runs a copy without it
        // (the symbol table stays, so functions keep their names).
        let relayBinary = folder + "/keyvault-relay"
        try run("/usr/bin/objcopy", ["--strip-debug", URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path + "/keyvault-relay", relayBinary])
        let relay = try await BenchRelay.postgresFromEnvironment(service: true, relayBinary: relayBinary, launcher: launcher).get()
        defer { relay.remove() }
        guard let pid = relay.servicePID else { throw BenchError("no relay service process") }
        let founded = try await relay.foundAccount(try AccountID(validating: "instructions"), logger: logger)
        let client = founded.client
        defer { Task { await client.shutdown() } }
        var circle = founded.circle
        var generation: Generation = 2
        let share = Random.bytes(AppendBench.shareBytes)
        let recipients = [DeviceID(hash: Random.bytes(16)), DeviceID(hash: Random.bytes(16))]
        func append() async throws {
            let entry = circle.nextEntry(.announce(generation: generation, keyID: KeyID(hash: Random.bytes(16)), keyCreatedAt: 0),
                                         signer: founded.signing, signerID: founded.deviceID, at: Date())
            try circle.apply(entry)
            try await client.publish(batch: [.log(entry), .share(account: circle.account, recipient: recipients[0], sealed: share),
                                             .share(account: circle.account, recipient: recipients[1], sealed: share)])
            generation = generation.next!  // a few hundred appends stay far below 2^31 − 1
        }
        for _ in 0..<20 { try await append() }
        try control("-z", pid)
        for _ in 0..<count { try await append() }
        let appendDump = try dump(pid, folder: folder)
        // Kept for a closer look (`callgrind_annotate .build/bench-callgrind-append.out`).
        try? FileManager.default.removeItem(atPath: ".build/bench-callgrind-append.out")
        try? FileManager.default.copyItem(atPath: appendDump, toPath: ".build/bench-callgrind-append.out")
        var last = RelayCursor.start
        while let next = try await client.rows(account: circle.account, after: last, limit: 1000).last?.cursor { last = next }
        try control("-z", pid)
        for _ in 0..<count { _ = try await client.rows(account: circle.account, after: last, limit: 1000) }
        let readDump = try dump(pid, folder: folder)
        return Result(count: count, append: try totals(appendDump) / UInt64(count), read: try totals(readDump) / UInt64(count),
                      top: try top(appendDump, parts.count))
    }

    private static func control(_ option: String, _ pid: Int32) throws {
        try run("/usr/bin/callgrind_control", [option, String(pid)])
    }

    private static func run(_ executable: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw BenchError("\(executable) \(arguments.joined(separator: " ")) failed") }
    }

    /// Dumps the counters and answers the new dump's path.
    private static func dump(_ pid: Int32, folder: String) throws -> String {
        let before = Set(try FileManager.default.contentsOfDirectory(atPath: folder))
        try control("-d", pid)
        for _ in 0..<200 {
            if let new = Set(try FileManager.default.contentsOfDirectory(atPath: folder)).subtracting(before).first { return folder + "/" + new }
            usleep(50_000)
        }
        throw BenchError("callgrind wrote no dump in \(folder)")
    }

    /// The dump's instruction count (its `totals:` or `summary:` line).
    private static func totals(_ path: String) throws -> UInt64 {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        for line in text.split(separator: "\n") where line.hasPrefix("totals:") || line.hasPrefix("summary:") {
            if let value = line.split(separator: " ").dropFirst().first.flatMap({ UInt64($0) }) { return value }
        }
        throw BenchError("no totals in \(path)")
    }

    /// Where an append's instructions go: what each of these functions runs, with all it calls
    /// (callgrind_annotate, inclusive). Synchronous functions only: an async function's count
    /// through `swift_task_switch` takes in whatever its thread ran next.
    static let parts: [(label: String, function: String)] = [
        ("Ed25519 verifications (libsodium), all of them", "crypto_sign_verify_detached "),
        ("the request's signature (RFC 9421)", "RequestSignature.isValid(signature:by:)"),
        ("the batch checked against the account's circle (`Authorization.publish`)", "Authorization.publish("),
        ("the account's view brought up to date with the rows the store answered (`VerifiedViews.extend`)", "VerifiedViews.extend("),
        ("log entries applied (`CircleState.apply`), wherever", "CircleState.apply(_:)"),
        ("PostgreSQL's answers read: TLS, then postgres-nio's decoding (`NIOSSLHandler.channelRead`)", "NIOSSLHandler.channelRead(context:data:)"),
        ("bodies' Base64 (libsodium)", "sodium_base642bin"),
        ("generic metadata looked up at run time (Swift runtime)", "_swift_getGenericMetadata("),
    ]

    /// Each of `parts`' instructions in the dump (0 where the function did not run).
    private static func top(_ path: String, _ count: Int) throws -> [(name: String, instructions: UInt64)] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/callgrind_annotate")
        process.arguments = ["--inclusive=yes", "--threshold=100", path]
        // Swift's names demangled, where the toolchain is at hand.
        let demangler = Process()
        demangler.executableURL = URL(fileURLWithPath: "/opt/swift/usr/bin/swift-demangle")
        demangler.arguments = ["--simplified"]
        let annotated = Pipe(), output = Pipe()
        process.standardOutput = annotated
        process.standardError = FileHandle.nullDevice
        let demangling = FileManager.default.isExecutableFile(atPath: demangler.executableURL!.path)
        if demangling {
            demangler.standardInput = annotated
            demangler.standardOutput = output
            try demangler.run()
        }
        try process.run()
        let text = String(decoding: (demangling ? output : annotated).fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        if demangling { demangler.waitUntilExit() }
        // "1,234,567 (12.34%)  file:function [object]": the first line naming each function is its total.
        var found: [String: UInt64] = [:]
        for line in text.split(separator: "\n") {
            let trimmed = line.drop { $0 == " " }
            guard let space = trimmed.firstIndex(of: " "), let value = UInt64(trimmed[..<space].replacingOccurrences(of: ",", with: "")) else { continue }
            for part in parts where found[part.function] == nil && line.contains(part.function) { found[part.function] = value }
        }
        return parts.prefix(count).map { ($0.label, found[$0.function] ?? 0) }
    }
}

extension Report {
    mutating func measureAppendInstructions(in directory: String, logger: Logger) async {
        do {
            appendInstructions = try await AppendInstructionsBench.measure(count: 200, in: directory, logger: logger)
            if let r = appendInstructions {
                say("relay service instructions: \(r.append) per append, \(r.read) per signed read (\(String(format: "%.1f", Double(r.append) / Double(r.read)))×)")
            }
        } catch {
            appendInstructionsMissing = "\(error)"
            say("relay service instructions: not measured: \(error)")
        }
    }

    var appendInstructionsSection: String {
        var text = """
            ## Instructions per append in the relay service (callgrind)

            Counted, not timed: `valgrind --tool=callgrind` runs one `keyvault-relay` on PostgreSQL, and the count \
            is the same for the same binary and inputs whatever else the machine does. One device of its own account, \
            founded through the service, makes 20 appends to warm up; then the counters are zeroed, and it makes 200 \
            appends one after another, each what a rotation appends (an `announce` entry on its head and two shares, \
            one signed request); the counters are dumped. Then, zeroed again, 200 signed reads of the account after \
            its last row, each finding nothing: the baseline, what every signed request pays (the HTTP exchange, the \
            signature and its nonce, one query). The relay process alone is counted: PostgreSQL's work is not.


            """
        guard let r = appendInstructions else { return text + "Not measured: \(appendInstructionsMissing ?? "skipped").\n\n" }
        text += "| request | instructions each | / signed read |\n|---|---:|---:|\n"
        text += "| a signed read finding nothing (baseline) | \(r.read) | 1.00 |\n"
        text += "| an append (announce + two shares) | \(r.append) | **\(String(format: "%.2f", Double(r.append) / Double(r.read)))** |\n\n"
        text += "Where an append's instructions go: what each part runs, with all it calls, per append (callgrind_annotate, inclusive; the parts overlap: a log entry applied includes its verification; the dump is kept in `.build/bench-callgrind-append.out`):\n\n| part | instructions per append | share of an append |\n|---|---:|---:|\n"
        for row in r.top {
            let each = row.instructions / UInt64(r.count)
            text += "| \(row.name) | \(each) | \(String(format: "%.1f", 100 * Double(each) / Double(r.append)))% |\n"
        }
        return text + "\n"
    }
}
