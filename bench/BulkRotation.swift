import Foundation
import KeyVault
import KeyVaultEngine
import KeyVaultPolicy
import KeyVaultClient
import Logging
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultAccount
import KeyVaultVault
import KeyVaultRelay
import KeyVaultRelayClient
import KeyVaultRelayStore

/// Issue 4: rotating many accounts at once. Three devices on one relay, each
/// in its own process, as on three machines (when every secret had its own
/// `sodium_malloc` region, 1,000 accounts on three devices in one process
/// exceeded its memory-mapping limit); device 0 creates the accounts and devices 1 and 2 enroll in each
/// (not timed, 8 accounts at a time, within a time budget). Timed: device 0
/// rotates every account (`promote: now`, 16 at a time), then devices 1 and 2
/// are asked for each new key by key ID with `?wait=` (again after 2 ms while
/// the key ID is still unknown to them) until both hold all.
enum BulkRotationBench {
    struct Result {
        var requested: Int
        /// Accounts set up within the budget, and so rotated.
        var accounts: Int
        var setupSeconds: Double
        var setupBudgetSeconds: Double
        /// The most memory mappings a device process held after the rotation.
        var mappings: Int
        var maxMappings: Int
        /// First rotate sent → last rotate answered on device 0.
        var rotatedSeconds: Double
        /// First rotate sent → devices 1 and 2 hold every new key.
        var deliveredSeconds: Double
        var rawSealsPerSecond: Double

        var generationsPerSecond: Double { Double(accounts) / deliveredSeconds }
        /// Two shares per rotation: one to each other device.
        var sharesPerSecond: Double { Double(2 * accounts) / deliveredSeconds }
    }

    static let rotateWorkers = 16

    static func run(accounts requested: Int, setupBudget: Double, relay: BenchRelay, logger: Logger) async throws -> Result {
        try await DeviceCircle.with(devices: 3, relay: relay, name: "bulk", placement: .processes, logger: logger) { circle in
            let setupStart = ContinuousClock.now
            let deadline = setupStart + .milliseconds(Int(setupBudget * 1000))
            let setUp = try await concurrently(requested, workers: 8, socket: circle.sockets[0], while: { ContinuousClock.now < deadline }) { index, _ in
                try await circle.createAndEnrollAll("bulk\(index)")
                return index
            }.compactMap { $0 }
            let setupSeconds = Load.seconds(ContinuousClock.now - setupStart)
            say("bulk: \(setUp.count) of \(requested) accounts set up in \(Int(setupSeconds)) s")
            guard !setUp.isEmpty else { throw BenchError("no account was set up within \(Int(setupBudget)) s") }

            let start = ContinuousClock.now
            let keyIDs = try await concurrently(setUp.count, workers: rotateWorkers, socket: circle.sockets[0]) { index, connection in
                let rotated = try await connection.request("POST", "/v1/accounts/bulk\(setUp[index])/rotate", body: Array(#"{"promote":"now"}"#.utf8))
                guard rotated.status == 200, let keyID = rotated.object["keyId"] as? String else { throw BenchError("rotate bulk\(setUp[index]): \(rotated.text)") }
                return keyID
            }.map { $0! }
            let rotated = Load.seconds(ContinuousClock.now - start)
            try await withThrowingTaskGroup(of: [Int?].self) { group in
                for device in [1, 2] {
                    group.addTask {
                        try await concurrently(setUp.count, workers: rotateWorkers / 2, socket: circle.sockets[device]) { index, connection in
                            let end = ContinuousClock.now + .seconds(120)
                            while true {
                                let key = try await connection.request("GET", "/v1/accounts/bulk\(setUp[index])/keys/id/\(keyIDs[index])?wait=120")
                                if key.status == 200 { return index }
                                // 404 until the device has read the announcement; then the read waits for the share.
                                guard key.status == 404, ContinuousClock.now < end else {
                                    throw BenchError("device \(device), bulk\(setUp[index]): \(key.text)")
                                }
                                try await Task.sleep(for: .milliseconds(2))
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            let delivered = Load.seconds(ContinuousClock.now - start)
            let mappings = circle.processIDs.map(ProcessLimits.mappings(of:)).max() ?? 0
            say("bulk: at most \(mappings) memory mappings in a device process, of \(ProcessLimits.maxMappings)")
            let keys = (0..<max(2 * setUp.count, 500)).map { _ in BoxSecretKey.generate().publicKey }
            return Result(requested: requested, accounts: setUp.count, setupSeconds: setupSeconds, setupBudgetSeconds: setupBudget,
                          mappings: mappings, maxMappings: ProcessLimits.maxMappings,
                          rotatedSeconds: rotated, deliveredSeconds: delivered, rawSealsPerSecond: PropagationBench.rawSealsPerSecond(to: keys))
        }
    }
}

extension Report {
    mutating func measureBulk(accounts: Int, setupBudget: Double, in directory: String, logger: Logger) async throws {
        let relay = try BenchRelay.sqlite(in: directory + "/bulk-relay")
        let result = try await BulkRotationBench.run(accounts: accounts, setupBudget: setupBudget, relay: relay, logger: logger)
        bulk = result
        say("bulk rotation of \(result.accounts) accounts: \(Int(result.generationsPerSecond)) generations/s, "
              + "\(Int(result.sharesPerSecond)) shares/s, raw seal \(Int(result.rawSealsPerSecond))/s")
    }

    var bulkSection: String {
        guard let bulk else { return "" }
        let ratio = bulk.sharesPerSecond / bulk.rawSealsPerSecond
        let shortfall = bulk.accounts < bulk.requested
            ? "\n**Only \(bulk.accounts) of the \(bulk.requested) accounts asked for were set up within the \(Int(bulk.setupBudgetSeconds)) s " +
              "setup budget on this machine**, so the rotation was measured on those \(bulk.accounts); the rates are per generation " +
              "and per share, not a measurement of \(bulk.requested) accounts.\n"
            : ""
        return """
            ## Bulk rotation: \(bulk.requested) accounts, 3 devices each

            Three daemons on one SQLite relay file, each in its own process (`keyvault-bench --device`), as on three \
            machines sharing a file. Each process has its own `vm.max_map_count` (\(bulk.maxMappings) here); a daemon's \
            secrets share locked regions of many slots, and after this run a device process held \(bulk.mappings) mappings \
            (when every secret was its own `sodium_malloc` region, about 20 mappings per account per device, three daemons \
            with 1,000 accounts each did not fit in one process). Not timed: device 1 creates the accounts and devices 2 \
            and 3 enroll in each and receive generation 1 (8 accounts at a time; \(Int(bulk.setupSeconds)) s here). Timed: \
            device 1 rotates every account with `{"promote":"now"}`, \(BulkRotationBench.rotateWorkers) requests at a time on \
            keep-alive connections; then devices 2 and 3 are each asked for every new key by key ID \
            (`GET …/keys/id/KEYID?wait=120`, 8 at a time per device, asked again 2 ms later while a device has not yet read \
            the announcement and so answers `unknown`) until both hold them all. Each rotation is one \
            generation and two shares (one per other device); each share is also opened, stored and acknowledged by \
            its device, which the clock includes. Baseline: raw `crypto_box_seal` of a 200-byte message on one core, \
            measured right after in the same run.
            \(shortfall)
            | accounts rotated | rotations answered on device 1 | every key on devices 2 and 3 | generations /s | shares /s | raw `crypto_box_seal` /s (baseline) | shares/s / raw |
            |---:|---:|---:|---:|---:|---:|---:|
            | \(bulk.accounts) | \(String(format: "%.1f s", bulk.rotatedSeconds)) | \(String(format: "%.1f s", bulk.deliveredSeconds)) | \(Int(bulk.generationsPerSecond)) | \(Int(bulk.sharesPerSecond)) | \(Int(bulk.rawSealsPerSecond)) | **\(String(format: "%.3f", ratio))** |


            """
    }
}
