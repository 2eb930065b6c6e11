import ArgumentParser
import FoundationEssentials
import KeyVaultClient
import KeyVaultUnixSocket
import KeyVaultIDs

struct Rotate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "rotate", abstract: "Rotate an account's key: a new generation for every trusted device.")
    @OptionGroup var socket: SocketOptions
    @OptionGroup var account: AccountOption
    @Option(help: "after-acks (current once every trusted device holds it) or now.")
    var promote: String = "after-acks"

    func run() async throws {
        let id = try account.validated()
        try await CLIRequest(socket: socket.path).send("POST", "/v1/accounts/\(id)/rotate", json: ["promote": promote]).finish()
    }
}

struct Revoke: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "revoke", abstract: "Remove a device from an account's circle (then rotate, by policy).")
    @OptionGroup var socket: SocketOptions
    @OptionGroup var account: AccountOption
    @OptionGroup var device: DeviceIDOption

    func run() async throws {
        let id = try account.validated()
        try await CLIRequest(socket: socket.path).send("DELETE", "/v1/accounts/\(id)/devices/\(device.deviceID)").finish()
    }
}

struct Drill: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "drill", abstract: "Drills that prove the circle works.", subcommands: [RotateDrill.self])

    /// Rotates, watches every trusted device acknowledge the new generation,
    /// and prints a table; exits 1 naming any device that missed the deadline.
    struct RotateDrill: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rotate",
            abstract: "Rotate and prove every trusted device got the new key: a per-device table of time to key.")
        @OptionGroup var socket: SocketOptions
        @OptionGroup var account: AccountOption
        @Option(help: "How long devices have to acknowledge: 60s, 2m…")
        var deadline: String = "60s"
        @Flag(help: "Print the result as JSON.")
        var json = false

        func run() async throws {
            let id = try account.validated()
            guard let seconds = DurationText.seconds(deadline), seconds > 0 else { throw UsageError("--deadline takes a duration such as 60s (at most 31 years)") }
            let request = CLIRequest(socket: socket.path)
            let started = Date()
            let rotated = try await request.send("POST", "/v1/accounts/\(id)/rotate", json: ["promote": "after-acks"])
            guard rotated.state == "ready", let generation = rotated.object["generation"]?.int, let keyID = rotated.field("keyId").flatMap({ KeyIdentifier(hex: $0) }) else { return try rotated.finish() }
            if let note = rotated.field("note") { StandardError.print("keyvault: \(note)") }
            let end = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
            var rows: [DrillRow] = []
            var shown = ""
            while true {
                let answer = try await request.send("GET", "/v1/accounts/\(id)/devices")
                let devices = (answer.object["devices"]?.array ?? []).compactMap(\.object).filter { $0["status"]?.string == "trusted" }
                rows = devices.map { DrillRow(device: $0, keyID: keyID, started: started) }
                let done = rows.filter(\.acknowledged).count
                // Progress is for a person watching: on a terminal, and only when it changes.
                let line = DrillRow.progress(done, of: rows.count) + "  generation \(generation)"
                if !json, Terminal.standardErrorIsOne, line != shown {
                    StandardError.print(line)
                    shown = line
                }
                if done == rows.count || ContinuousClock.now >= end { break }
                // A local socket and an answer from memory: polling often keeps a healthy drill near the arrival latency.
                try await Task.sleep(for: .milliseconds(10))
            }
            let missed = rows.filter { !$0.acknowledged }
            if json {
                let object: [String: JSONValue] = ["state": missed.isEmpty ? "ready" : "pending", "generation": .int(generation),
                                                   "keyId": .string(keyID.hex), "devices": .array(rows.map(\.json)),
                                                   "missed": .array(missed.map { .string($0.deviceID?.hex ?? "?") })]
                print(try JSONValue.text(object, pretty: true))
            } else {
                // The drill made a real rotation: say which key it made, before whose acknowledgements.
                print("generation \(generation), key ID \(keyID.hex): announced to every trusted device, current once all hold it")
                print(DrillRow.table(rows))
            }
            if !missed.isEmpty {
                StandardError.print("keyvault: drill failed: \(missed.map { "\($0.name) (\($0.deviceID?.hex ?? "?"))" }.joined(separator: ", ")) did not acknowledge generation \(generation) within \(deadline)")
                throw ExitCode(1)
            }
        }
    }
}

struct DrillRow {
    /// nil: the daemon listed a device ID that does not parse (shown as "?").
    var deviceID: DeviceIdentifier?
    var name: String
    var acknowledged: Bool
    var timeToKey: Double?
    var lastSeen: String

    /// `keyID`: the drill's new key (two keys may share a generation number).
    init(device: [String: JSONValue], keyID: KeyIdentifier, started: Date) {
        deviceID = device["deviceId"]?.string.flatMap { DeviceIdentifier(hex: $0) }
        name = device["deviceName"]?.string ?? ""
        let at = device["acknowledged"]?[keyID.hex]?.string
        acknowledged = at != nil
        lastSeen = device["lastSeen"]?.string ?? "-"
        if let at, let date = try? Date(at, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) {
            timeToKey = max(0, date.timeIntervalSince(started))
        }
    }

    var json: JSONValue {
        ["deviceId": .string(deviceID?.hex ?? "?"), "deviceName": .string(name), "acknowledged": .bool(acknowledged),
         "timeToKeyMs": timeToKey.map { .int(Int($0 * 1000)) } ?? .null, "lastSeen": .string(lastSeen)]
    }

    static func progress(_ done: Int, of total: Int) -> String {
        let width = 30
        let filled = total == 0 ? width : width * done / total
        return "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled) + "] \(done)/\(total) devices"
    }

    static func table(_ rows: [DrillRow]) -> String {
        var lines = ["", pad("DEVICE", 34) + pad("NAME", 16) + pad("ACKNOWLEDGED", 14) + pad("TIME TO KEY", 13) + "LAST SEEN"]
        for row in rows.sorted(by: { $0.name < $1.name }) {
            let time = row.timeToKey.map { "\(Int(($0 * 1000).rounded())) ms" } ?? "-"
            lines.append(pad(row.deviceID?.hex ?? "?", 34) + pad(row.name, 16) + pad(row.acknowledged ? "yes" : "NO", 14) + pad(time, 13) + row.lastSeen)
        }
        return lines.joined(separator: "\n")
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
    }
}

