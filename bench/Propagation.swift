import Foundation
import KeyVault
import KeyVaultClient
import Logging

/// Issue 3's figures: key arrival (approval sent to the waiting read answered)
/// across two daemons on one embedded relay, and share delivery to many
/// devices beside raw `crypto_box_seal`.
enum PropagationBench {
    struct Arrival {
        var samples: [Double]
        func percentile(_ p: Double) -> Double {
            let sorted = samples.sorted()
            return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
        }
    }

    static func arrival(enrollments: Int, logger: Logger) async throws -> Arrival {
        let dir = NSTemporaryDirectory() + "keyvault-bench-arrival-\(getpid())"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // Cheap KDF: this measures propagation, not Argon2id.
        var policy = Policy.builtInDefault(selfUID: geteuid())
        policy.kdf = try KDFParameters(opsLimit: 1, memLimitBytes: 64 * 1024)
        var sockets: [String] = []
        var tasks: [Task<Void, any Error>] = []
        for name in ["a", "b"] {
            let relay = try SQLiteRelay(path: dir + "/relay.sqlite")
            let service = try KeyVaultService(vault: try Vault(directory: dir + "/" + name), policy: PolicyStore(policy: policy, directory: nil),
                                              logger: logger, relay: relay)
            let socket = dir + "/\(name).sock"
            let app = KeyVaultServer.makeApplication(service: service, options: .init(socketPath: socket), logger: logger)
            tasks.append(Task { try await app.run() })
            tasks.append(Task { await service.propagate() })
            sockets.append(socket)
        }
        defer { for task in tasks { task.cancel() } }
        for socket in sockets { for _ in 0..<200 where !SocketPath.isAnswering(socket) { try await Task.sleep(for: .milliseconds(25)) } }
        let (a, b) = (sockets[0], sockets[1])

        var samples: [Double] = []
        for i in 0..<enrollments {
            let user = "arrival\(i)"
            _ = try await SocketHTTPClient.request(socket: a, "POST", "/v1/accounts", body: Array(#"{"user":"\#(user)","passphrase":"pa"}"#.utf8))
            let ticket = try await SocketHTTPClient.request(socket: b, "POST", "/v1/accounts/\(user)/enroll",
                                                            body: Array(#"{"user":"\#(user)","passphrase":"pb","deviceName":"b"}"#.utf8))
            let fields = try JSONSerialization.jsonObject(with: Data(ticket.body)) as? [String: Any] ?? [:]
            let device = fields["deviceId"] as? String ?? "", code = fields["pairingCode"] as? String ?? ""
            // A must have seen the request before it can approve it.
            for _ in 0..<400 {
                let list = try await SocketHTTPClient.request(socket: a, "GET", "/v1/accounts/\(user)/enrollments")
                if list.text.contains(device) { break }
                try await Task.sleep(for: .milliseconds(2))
            }
            let waiter = Task { () -> ContinuousClock.Instant in
                let reply = try await SocketHTTPClient.request(socket: b, "GET", "/v1/accounts/\(user)/keys/current?wait=20")
                precondition(reply.status == 200, reply.text)
                return ContinuousClock.now
            }
            try await Task.sleep(for: .milliseconds(20))  // the waiting read is parked
            let sent = ContinuousClock.now
            let approved = try await SocketHTTPClient.request(socket: a, "POST", "/v1/accounts/\(user)/enrollments/\(device)/approve",
                                                              body: Array(#"{"pairingCode":"\#(code)"}"#.utf8))
            precondition(approved.status == 200, approved.text)
            samples.append(Load.seconds(try await waiter.value - sent))
        }
        return Arrival(samples: samples)
    }

    struct Delivery {
        var sharesPerSecond: Double
        var rawSealsPerSecond: Double
        var recipients: Int
    }

    /// One device seals a key to `recipients` devices and stores each share on the relay.
    static func delivery(recipients: Int) async throws -> Delivery {
        let dir = NSTemporaryDirectory() + "keyvault-bench-delivery-\(getpid())"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let relay = try SQLiteRelay(path: dir + "/relay.sqlite")
        let account = try AccountID(validating: "delivery")
        let sender = SigningKey.generate()
        let key = SecretKey.generate()
        let keyID = Hex.encode(key.keyID(label: Labels.keyID))
        let devices = (0..<recipients).map { _ in BoxSecretKey.generate().publicKey }

        let start = ContinuousClock.now
        let headers = devices.indices.map { i in
            KeyShare.Header(account: account, generation: 1, keyID: keyID, createdAt: Date(), sender: "sender", recipient: "device\(i)")
        }
        let sealed = KeyShare.sealAll(key: key, headers: headers, recipients: devices, signer: sender)
        try await relay.publish(batch: sealed.enumerated().map { i, box in RelayRecord.share(account: account, recipient: "device\(i)", sealed: box) })
        let delivered = Load.seconds(ContinuousClock.now - start)

        let message = SecureBytes(randomCount: 200)  // about a share's payload and signature
        let rawStart = ContinuousClock.now
        for device in devices { _ = SealedBox.seal(message, to: device) }
        let raw = Load.seconds(ContinuousClock.now - rawStart)
        return Delivery(sharesPerSecond: Double(recipients) / delivered, rawSealsPerSecond: Double(recipients) / raw, recipients: recipients)
    }
}
