import Foundation
import Logging
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultAccount
import KeyVaultVault
import KeyVaultRelay
import KeyVaultRelayClient
import KeyVaultRelayStore

/// Appends through the relay service, 1 and 64 accounts at once: each writer is
/// a device that founded its own account through the service (a candidacy with
/// a token, then the genesis) and appends what a rotation appends, an
/// `announce` log entry that extends its head and two shares, as one signed
/// request, the next as soon as the last is answered.
enum ServiceAppendsBench {
    struct Row {
        var writers: Int
        var batches: Int
        var seconds: Double
        var rate: Double { Double(batches) / seconds }
    }

    static func run(writers: Int, seconds: Double, relay: BenchRelay, tag: String, logger: Logger) async throws -> Row {
        // Every writer set up before the clock starts.
        var devices: [(HTTPRelay, CircleState, SigningKey, DeviceID)] = []
        for writer in 0..<writers {
            let founded = try await relay.foundAccount(try AccountID(validating: "append-\(tag)-\(writer)"), logger: logger)
            devices.append((founded.client, founded.circle, founded.signing, founded.deviceID))
        }
        let start = ContinuousClock.now
        let deadline = start + .milliseconds(Int(seconds * 1000))
        let share = Random.bytes(AppendBench.shareBytes)
        let recipients = [DeviceID(hash: Random.bytes(16)), DeviceID(hash: Random.bytes(16))]
        defer {
            let clients = devices.map(\.0)
            Task { for client in clients { await client.shutdown() } }
        }
        let batches = try await withThrowingTaskGroup(of: Int.self) { group in
            for (client, first, signing, deviceID) in devices {
                group.addTask {
                    var circle = first, count = 0, generation: Generation = 2
                    while ContinuousClock.now < deadline {
                        let entry = circle.nextEntry(.announce(generation: generation, keyID: KeyID(hash: Random.bytes(16)), keyCreatedAt: 0),
                                                     signer: signing, signerID: deviceID, at: Date())
                        try circle.apply(entry)
                        try await client.publish(batch: [.log(entry), .share(account: circle.account, recipient: recipients[0], sealed: share),
                                                         .share(account: circle.account, recipient: recipients[1], sealed: share)])
                        generation = generation.next!  // a bench of a few thousand rotations stays far below 2^31 − 1
                        count += 1
                    }
                    return count
                }
            }
            var total = 0
            for try await count in group { total += count }
            return total
        }
        let elapsed = Load.seconds(ContinuousClock.now - start)
        return Row(writers: writers, batches: batches, seconds: elapsed)
    }
}

extension Report {
    mutating func measureServiceAppends(seconds: Double, logger: Logger) async {
        switch await BenchRelay.postgresFromEnvironment(service: true) {
        case .failure(let why):
            serviceAppendsMissing = why.description
        case .success(let relay):
            defer { relay.remove() }
            do {
                for writers in [1, 64] {
                    let row = try await ServiceAppendsBench.run(writers: writers, seconds: seconds, relay: relay, tag: "w\(writers)", logger: logger)
                    serviceAppends.append(row)
                    say("relay service appends: \(writers) account(s) at once: \(Int(row.rate)) batches/s")
                }
            } catch {
                serviceAppendsMissing = "\(error)"
            }
        }
        if let serviceAppendsMissing { say("relay service appends: not measured: \(serviceAppendsMissing)") }
    }

    var serviceAppendSection: String {
        var text = """
            ## Appends per second through the relay service, 1 and 64 accounts at once

            Each writer is a device of its own account (its own client, as separate daemons are), founded through one \
            `keyvault-relay` on PostgreSQL; it appends what a rotation appends, an `announce` entry on its head and two \
            shares, as one signed request (the service checks the signature, verifies the entry against its view of the \
            circle, and in one transaction spends the request's nonce, stores the three rows and NOTIFYs), the next as soon as the last is answered, \
            for \(Int(seconds)) s. Baseline: one writer, measured first in the same run.


            """
        if let serviceAppendsMissing, serviceAppends.isEmpty { return text + "Not measured: \(serviceAppendsMissing).\n\n" }
        let baseline = serviceAppends.first { $0.writers == 1 }?.rate ?? .nan
        text += "| accounts at once | batches | seconds | batches /s | / one | goal ≥ 5× |\n|---:|---:|---:|---:|---:|---|\n"
        for row in serviceAppends {
            let ratio = row.rate / baseline
            text += "| \(row.writers) | \(row.batches) | \(String(format: "%.1f", row.seconds)) | \(Int(row.rate)) | **\(String(format: "%.2f", ratio))** | "
            text += (row.writers == 1 ? "baseline" : ratio >= 5 ? "met" : "**not met**") + " |\n"
        }
        if let serviceAppendsMissing { text += "\nThe run stopped early: \(serviceAppendsMissing).\n" }
        return text + "\n"
    }
}
