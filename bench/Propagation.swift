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

/// Issue 3's figures, per relay (issue 5): key arrival (approval sent to the
/// waiting read answered) across two in-process daemons, and share delivery to
/// many devices beside raw `crypto_box_seal`.
enum PropagationBench {
    struct Arrival {
        var samples: [Double]
        func percentile(_ p: Double) -> Double { Percentile.of(samples, p) }
    }

    /// Two in-process devices on `relay`. For each account: device 1 enrolls, a
    /// key read on device 1 waits, device 0 approves; the time runs from the
    /// approve request being sent to the waiting read being answered.
    static func arrival(enrollments: Int, relay: BenchRelay, logger: Logger, accountPrefix: String = "arrival") async throws -> Arrival {
        try await DeviceCircle.with(devices: 2, relay: relay, name: accountPrefix, logger: logger) { circle in
            var samples: [Double] = []
            for i in 0..<enrollments {
                let user = "\(accountPrefix)\(i)"
                try await circle.createAccount(user)
                let (device, code) = try await circle.requestEnrollment(user, device: 1)
                samples.append(try await timeToAnswer(circle, "/v1/accounts/\(user)/keys/current?wait=20") {
                    try await circle.approve(user, deviceID: device, code: code)
                })
            }
            return Arrival(samples: samples)
        }
    }

    /// Two in-process devices on `relay`, both in one account's circle. For each
    /// rotation: a read on device 1 waits for the next generation, device 0
    /// rotates; the time runs from the rotate request being sent to the waiting
    /// read being answered. No pairing step is in it: only the key's way across.
    static func rotationArrival(rotations: Int, relay: BenchRelay, logger: Logger) async throws -> Arrival {
        try await DeviceCircle.with(devices: 2, relay: relay, name: "rotation-arrival", logger: logger) { circle in
            let user = "rotation-arrival"
            try await circle.createAccount(user)
            try await circle.enroll(user, device: 1)
            var samples: [Double] = []
            for generation in 2...(rotations + 1) {
                samples.append(try await timeToAnswer(circle, "/v1/accounts/\(user)/keys/\(generation)?wait=20") {
                    try await circle.request(0, "POST", "/v1/accounts/\(user)/rotate", #"{"promote":"now"}"#)
                })
            }
            return Arrival(samples: samples)
        }
    }

    /// Parks `waitingRead` on device 1, then sends `action` to device 0 (it must
    /// answer 200); the time from sending it to the waiting read's answer (200).
    private static func timeToAnswer(_ circle: DeviceCircle, _ waitingRead: String,
                                     after action: () async throws -> HTTPResult) async throws -> Double {
        let waiter = Task { () -> ContinuousClock.Instant in
            let reply = try await circle.request(1, "GET", waitingRead)
            guard reply.status == 200 else { throw BenchError("the waiting read \(waitingRead) answered \(reply.status): \(reply.text)") }
            return ContinuousClock.now
        }
        try await Task.sleep(for: .milliseconds(20))  // the waiting read is parked
        let sent = ContinuousClock.now
        let answered = try await action()
        guard answered.status == 200 else { throw BenchError("the action answered \(answered.status): \(answered.text)") }
        return Load.seconds(try await waiter.value - sent)
    }

    struct Delivery {
        var sharesPerSecond: Double
        var rawSealsPerSecond: Double
        var recipients: Int
    }

    /// One device seals a key to `recipients` devices and stores each share on the relay in one batch.
    static func delivery(recipients: Int, relay address: BenchRelay) async throws -> Delivery {
        let relay = try await address.open()
        let account = try AccountID(validating: "delivery")
        let sender = SigningKey.generate()
        let key = SecretKey.generate()
        let keyID = KeyID(of: key)
        let senderID = DeviceID(hash: Random.bytes(16))
        let devices = (0..<recipients).map { _ in BoxSecretKey.generate().publicKey }
        let deviceIDs = devices.map { _ in DeviceID(hash: Random.bytes(16)) }

        let start = ContinuousClock.now
        let headers = devices.indices.map { i in
            KeyShare.Header(account: account, generation: 1, keyID: keyID, createdAt: Date(), sender: senderID, recipient: deviceIDs[i])
        }
        let sealed = KeyShare.sealAll(key: key, headers: headers, recipients: devices, signer: sender)
        let records = sealed.enumerated().map { i, box in RelayRecord.share(account: account, recipient: deviceIDs[i], sealed: box) }
        do {
            try await relay.publish(batch: records)
        } catch {
            await relay.shutdown()
            throw error
        }
        let delivered = Load.seconds(ContinuousClock.now - start)
        await relay.shutdown()
        return Delivery(sharesPerSecond: Double(recipients) / delivered, rawSealsPerSecond: rawSealsPerSecond(to: devices), recipients: recipients)
    }

    /// Raw `crypto_box_seal` of a 200-byte message (about a share's payload and signature) to each key, on one core.
    static func rawSealsPerSecond(to devices: [BoxPublicKey]) -> Double {
        let message = SecureBytes(randomCount: 200)
        let start = ContinuousClock.now
        for device in devices { _ = SealedBox.seal(message, to: device) }
        return Double(devices.count) / Load.seconds(ContinuousClock.now - start)
    }
}

/// One relay's arrival and delivery figures, or why they are missing.
struct RelayFigures {
    var kind: BenchRelay.Kind
    var arrival: PropagationBench.Arrival?
    var rotationArrival: PropagationBench.Arrival?
    var delivery: PropagationBench.Delivery?
    var missing: String?
}

extension Report {
    static let arrivalEnrollments = 50
    static let deliveryRecipients = 500

    /// Arrival and delivery on each relay. PostgreSQL needs KEYVAULT_TEST_POSTGRES;
    /// without it (or if it fails) the reason is reported instead of figures.
    mutating func measurePropagation(in directory: String, logger: Logger) async throws {
        for kind in BenchRelay.Kind.allCases {
            var figures = RelayFigures(kind: kind)
            do {
                func relay(_ name: String) async throws -> BenchRelay {
                    try kind == .sqlite ? BenchRelay.sqlite(in: directory + "/" + name) : await BenchRelay.postgresFromEnvironment(service: true).get()
                }
                let arrivalRelay = try await relay("arrival-relay")
                defer { arrivalRelay.remove() }
                let arrival = try await PropagationBench.arrival(enrollments: Self.arrivalEnrollments, relay: arrivalRelay, logger: logger)
                figures.arrival = arrival
                say("\(kind.rawValue) arrival: p50 \(Int(arrival.percentile(0.5) * 1000)) ms, p99 \(Int(arrival.percentile(0.99) * 1000)) ms")
                let rotationRelay = try await relay("rotation-relay")
                defer { rotationRelay.remove() }
                let rotation = try await PropagationBench.rotationArrival(rotations: Self.arrivalEnrollments, relay: rotationRelay, logger: logger)
                figures.rotationArrival = rotation
                say("\(kind.rawValue) arrival after a rotation: p50 \(Int(rotation.percentile(0.5) * 1000)) ms, p99 \(Int(rotation.percentile(0.99) * 1000)) ms")
                let deliveryRelay = try await relay("delivery-relay")
                defer { deliveryRelay.remove() }
                let delivery = try await PropagationBench.delivery(recipients: Self.deliveryRecipients, relay: deliveryRelay)
                figures.delivery = delivery
                say("\(kind.rawValue) delivery: \(Int(delivery.sharesPerSecond)) shares/s, raw seal \(Int(delivery.rawSealsPerSecond))/s")
            } catch {
                guard kind == .postgres else { throw error }
                figures.missing = "\(error)"
                say("\(kind.rawValue): not measured: \(error)")
            }
            relays.append(figures)
        }
    }

    /// The SQLite arrival p50: the baseline the drills are read against.
    var embeddedArrivalP50: Double? { relays.first { $0.kind == .sqlite }?.arrival?.percentile(0.5) }
    var embeddedRotationP50: Double? { relays.first { $0.kind == .sqlite }?.rotationArrival?.percentile(0.5) }

    var propagationSection: String {
        func ms(_ s: Double) -> String { String(format: "%.1f ms", s * 1000) }
        func cells(_ cell: (RelayFigures) -> String) -> String {
            relays.map { $0.missing == nil ? cell($0) : "not measured" }.joined(separator: " | ")
        }
        var header = "| |"
        for figures in relays { header += " \(figures.kind.rawValue) |" }
        header += "\n|---|" + String(repeating: "---:|", count: relays.count) + "\n"
        func arrivalGoal(_ figures: RelayFigures) -> String {
            guard let arrival = figures.arrival else { return "-" }
            let p50 = arrival.percentile(0.5), p99 = arrival.percentile(0.99)
            switch figures.kind {
            case .sqlite: return "p50 < 50 ms, p99 < 250 ms: " + (p50 < 0.05 && p99 < 0.25 ? "met" : "**not met**")
            case .postgres: return "p50 ≤ 20 ms: " + (p50 <= 0.02 ? "met" : "**not met**")
            }
        }
        func rotationGoal(_ figures: RelayFigures) -> String {
            guard let p50 = figures.rotationArrival?.percentile(0.5) else { return "-" }
            switch figures.kind {
            case .sqlite: return "-"
            case .postgres: return "p50 ≤ 20 ms: " + (p50 <= 0.02 ? "met" : "**not met**")
            }
        }
        func ratio(_ d: PropagationBench.Delivery) -> Double { d.sharesPerSecond / d.rawSealsPerSecond }
        let missing = relays.compactMap { f in f.missing.map { "The \(f.kind.rawValue) column was not measured: \($0)." } }
        let missingNote = missing.isEmpty ? "" : "\n" + missing.joined(separator: "\n") + "\n"
        return """
            ## Key arrival across devices, per relay

            Two daemons in one process, each with its own vault and its own connection to the relay: one SQLite file \
            (woken by inotify), or the relay service (`keyvault-relay`, plain HTTP on loopback, started by the bench) on a fresh \
            PostgreSQL database, each device signing its requests and holding one read per account at the service, which \
            LISTEN/NOTIFY wakes. For each of \
            \(Self.arrivalEnrollments) accounts: device B enrolls, a key read on B waits (`?wait=20`), device A approves; the time \
            runs from A's approve request being sent to B's waiting read being answered, so it includes A's log append, sealing \
            and storing the share, B's wake-up, reading the relay, verification, opening, storing and the answer. \
            The relays are measured one after the other in the same run; the SQLite column is the baseline for the service.

            \(header)| arrival p50 | \(cells { ms($0.arrival!.percentile(0.5)) }) |
            | arrival p99 | \(cells { ms($0.arrival!.percentile(0.99)) }) |
            | p50 / SQLite p50 | \(cells { String(format: "%.2f", $0.arrival!.percentile(0.5) / (embeddedArrivalP50 ?? .nan)) }) |
            | goal | \(cells(arrivalGoal)) |
            \(missingNote)
            Goals: the embedded relay's from issue 3; the relay service's (p50 at most 20 ms on loopback) from issue 11.

            The same pair, both already in one account's circle: for each of \(Self.arrivalEnrollments) rotations a read on B \
            waits for the next generation (`keys/N?wait=20`) and A rotates (`{"promote":"now"}`); the time runs from A's rotate \
            request being sent to B's read being answered: A's relay read, new key, log append, sealing and storing the share, \
            B's wake-up and everything after it, with no pairing step.

            \(header)| arrival after a rotation p50 | \(cells { ms($0.rotationArrival!.percentile(0.5)) }) |
            | arrival after a rotation p99 | \(cells { ms($0.rotationArrival!.percentile(0.99)) }) |
            | p50 / SQLite p50 | \(cells { String(format: "%.2f", $0.rotationArrival!.percentile(0.5) / (embeddedRotationP50 ?? .nan)) }) |
            | goal | \(cells(rotationGoal)) |

            Since pairing version 2, an approval's arrival (the first table) also holds the exchange's two legs through the \
            relay (A's response, B's confirmation) before the approve entry; a rotation's is the key's own way across, which \
            is what the first table measured with version 1. Issue 11's goal is read on both.

            ## Delivery to many devices, per relay

            One device signs and seals a key share to each of \(Self.deliveryRecipients) devices (spread over the machine's \
            cores, as a rotation does) and stores them in the relay's store in one transaction (for the service: its PostgreSQL \
            store directly, as the service does once it has checked the request), beside raw `crypto_box_seal` of a \
            200-byte message to the same keys on one core, measured right after in the same run. Each share costs an Ed25519 \
            signature and a sealed box.

            \(header)| shares sealed and stored /s | \(cells { "\(Int($0.delivery!.sharesPerSecond))" }) |
            | raw `crypto_box_seal` /s (baseline) | \(cells { "\(Int($0.delivery!.rawSealsPerSecond))" }) |
            | ratio | \(cells { "**" + String(format: "%.2f", ratio($0.delivery!)) + "**" }) |
            | goal ≥ 0.5 | \(cells { ratio($0.delivery!) >= 0.5 ? "met" : "**not met**" }) |
            \(missingNote)

            """
    }
}
