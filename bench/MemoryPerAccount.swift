import Foundation
import KeyVault
import KeyVaultEngine
import KeyVaultPolicy
import KeyVaultClient
import KeyVaultTestSupport
import Logging
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultAccount
import KeyVaultVault
import KeyVaultRelay
import KeyVaultRelayClient
import KeyVaultRelayStore

/// Issue 10: memory per unlocked account. One daemon in its own process (a
/// bench device on a SQLite relay, KDF 1 pass over 64 KiB); its resident and
/// locked memory, mappings and `lockedMemory` status with no account, then
/// with `accounts` unlocked ones. Baseline, same run: one `sodium_malloc`
/// region per 32-byte secret (the daemon's way before secrets were pooled),
/// held in this process.
enum MemoryBench {
    /// What /proc says of one process.
    struct ProcessMemory {
        var residentBytes: Int
        var lockedBytes: Int
        var mappings: Int

        static func of(_ process: Int32) -> ProcessMemory {
            let status = (try? String(contentsOfFile: "/proc/\(process)/status", encoding: .utf8)) ?? ""
            func kilobytes(_ field: String) -> Int {
                guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }) else { return 0 }
                return (Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0) * 1024
            }
            return ProcessMemory(residentBytes: kilobytes("VmRSS"), lockedBytes: kilobytes("VmLck"), mappings: ProcessLimits.mappings(of: process))
        }
    }

    struct Result {
        var accounts: Int
        var setupSeconds: Double
        var before: ProcessMemory
        var after: ProcessMemory
        /// `lockedMemory` from the daemon's status, after.
        var secrets: Int
        var inUse: Int
        var reserved: Int
        var swappable: Int
        /// The baseline: per 32-byte secret in its own sodium_malloc region.
        var baselineLockedPerSecret: Double
        var baselineResidentPerSecret: Double
        var baselineMappingsPerSecret: Double

        func perAccount(_ delta: Int) -> Double { Double(delta) / Double(accounts) }
        var secretsPerAccount: Double { Double(secrets) / Double(accounts) }
    }

    static let baselineSecrets = 1000

    static func run(accounts: Int, relay: BenchRelay, logger: Logger) async throws -> Result {
        try await DeviceCircle.with(devices: 1, relay: relay, name: "memory", placement: .processes, logger: logger) { circle in
            let pid = circle.processIDs[0], socket = circle.sockets[0]
            let before = ProcessMemory.of(pid)
            let start = ContinuousClock.now
            _ = try await concurrently(accounts, workers: 8, socket: socket) { index, connection in
                let created = try await connection.request("POST", "/v1/accounts",
                                                           body: Array(#"{"user":"mem\#(index)","passphrase":"bench passphrase"}"#.utf8))
                guard created.status == 200 else { throw BenchError("account mem\(index): \(created.text)") }
                return index
            }
            let setup = Load.seconds(ContinuousClock.now - start)
            // The relay passes that follow the creations settle before the figures are read.
            try await Task.sleep(for: .seconds(2))
            let after = ProcessMemory.of(pid)
            let status = try await SocketHTTPClient.request(socket: socket, "GET", "/v1/status")
            guard let object = try JSONSerialization.jsonObject(with: Data(status.body)) as? [String: Any],
                  let memory = object["lockedMemory"] as? [String: Any] else { throw BenchError("status: \(status.text)") }
            func field(_ name: String) -> Int { memory[name] as? Int ?? 0 }

            let here = ProcessMemory.of(getpid())
            let held = SodiumMallocBaseline.holding(baselineSecrets, of: 32) { ProcessMemory.of(getpid()) }
            let n = Double(baselineSecrets)
            return Result(accounts: accounts, setupSeconds: setup, before: before, after: after,
                          secrets: field("secrets"), inUse: field("inUse"), reserved: field("reserved"), swappable: field("swappable"),
                          baselineLockedPerSecret: Double(held.lockedBytes - here.lockedBytes) / n,
                          baselineResidentPerSecret: Double(held.residentBytes - here.residentBytes) / n,
                          baselineMappingsPerSecret: Double(held.mappings - here.mappings) / n)
        }
    }
}

extension Report {
    mutating func measureMemory(accounts: Int, in directory: String, logger: Logger) async throws {
        let relay = try BenchRelay.sqlite(in: directory + "/memory-relay")
        let result = try await MemoryBench.run(accounts: accounts, relay: relay, logger: logger)
        memory = result
        say("memory: \(Int(result.perAccount(result.after.residentBytes - result.before.residentBytes))) B resident, "
              + "\(Int(result.perAccount(result.after.lockedBytes - result.before.lockedBytes))) B locked per unlocked account; "
              + "baseline \(Int(result.baselineLockedPerSecret)) B locked per sodium_malloc'd secret")
    }

    var memorySection: String {
        guard let memory else { return "" }
        func grouped(_ value: Int) -> String {
            let digits = Array(String(value))
            return String(digits.enumerated().flatMap { index, digit in
                index > 0 && (digits.count - index) % 3 == 0 ? [",", digit] : [digit]
            })
        }
        func bytes(_ value: Double) -> String { value >= 10 ? "\(Int(value.rounded())) B" : String(format: "%.1f B", value) }
        let resident = memory.perAccount(memory.after.residentBytes - memory.before.residentBytes)
        let locked = memory.perAccount(memory.after.lockedBytes - memory.before.lockedBytes)
        let mappings = memory.perAccount(memory.after.mappings - memory.before.mappings)
        let oldLocked = memory.baselineLockedPerSecret * memory.secretsPerAccount
        let oldMappings = memory.baselineMappingsPerSecret * memory.secretsPerAccount
        return """
            ## Memory per unlocked account

            One daemon in its own process (a bench device on a SQLite relay; KDF 1 pass over 64 KiB): its resident \
            (`VmRSS`) and locked (`VmLck`) memory and its mappings (`/proc/PID/maps`) with no account, then after \
            \(grouped(memory.accounts)) accounts were created through the API (8 at a time, \(Int(memory.setupSeconds)) s), \
            each unlocked; and the daemon's own count (`GET /v1/status`, `lockedMemory`). Secrets share locked \
            regions of 64 KiB carved into slots of 16 to 2,048 bytes. Baseline, same run: \(MemoryBench.baselineSecrets) \
            32-byte secrets each in its own `sodium_malloc` region (the daemon's way before), held by the bench \
            process, scaled by the secrets an account holds.

            | per unlocked account | resident | locked | mappings | secrets | slot bytes in use | swappable |
            |---|---:|---:|---:|---:|---:|---:|
            | pooled (this daemon, \(grouped(memory.accounts)) accounts) | \(bytes(resident)) | \(bytes(locked)) | \(String(format: "%.3f", mappings)) | \(String(format: "%.1f", memory.secretsPerAccount)) | \(bytes(memory.perAccount(memory.inUse))) | \(memory.swappable) B in all |
            | one `sodium_malloc` per secret (baseline) | \(bytes(memory.baselineResidentPerSecret * memory.secretsPerAccount)) | \(bytes(oldLocked)) | \(String(format: "%.1f", oldMappings)) | | | |

            Locked memory per account: **\(bytes(locked))** pooled against \(bytes(oldLocked)) one region per secret \
            (\(String(format: "%.0f", oldLocked / max(locked, 1)))×); at the usual 8 MiB RLIMIT_MEMLOCK that is about \
            \(grouped(Int(Double(8 << 20) / max(locked, 1)))) unlocked accounts against \
            \(grouped(Int(Double(8 << 20) / max(oldLocked, 1)))). The resident figure includes everything \
            else an account costs (its state, its vault and relay pages in SQLite's caches).


            """
    }
}
