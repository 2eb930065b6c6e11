// A sync engine as small as it can be: it writes records encrypted under the
// user's key from keyvaultd, and reads them all back at the end.
//
// What it shows an app's developer:
// - `readyKey` rides out a key that is not here yet (`pending`: this device
//   waits to be approved, or for the key's delivery) and a locked account;
// - the key is read again for every batch, so a rotation is followed and a
//   lock is noticed; each record names its key by ID (`keyId`), so records
//   written before a rotation still open after it;
// - the key's bytes stay in `KeyBytes`, copied only into swift-crypto's
//   `SymmetricKey`, which wipes them too.
//
//   example-sync-engine --account ID --store FILE --stop-file FILE [--socket PATH] [--interval-ms N]
//
// It writes a batch every interval until the stop file appears, then opens
// every record in the store and prints one JSON line: how many it wrote,
// opened and failed to open, and under which generations.
import Crypto
import Foundation
import KeyVaultClient

struct Options {
    var account = ""
    var store = ""
    var stopFile = ""
    var socket: String?
    var interval = Duration.milliseconds(100)

    init(_ arguments: [String]) throws {
        var rest = arguments[...]
        while let flag = rest.popFirst() {
            guard let value = rest.popFirst() else { throw UsageError("\(flag) takes a value") }
            switch flag {
            case "--account": account = value
            case "--store": store = value
            case "--stop-file": stopFile = value
            case "--socket": socket = value
            case "--interval-ms": interval = .milliseconds(Int(value) ?? 100)
            default: throw UsageError("unknown option \(flag)")
            }
        }
        guard !account.isEmpty, !store.isEmpty, !stopFile.isEmpty else { throw UsageError("--account, --store and --stop-file are needed") }
    }
}

struct UsageError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// One encrypted record, as the untrusted cloud would store it.
struct StoredRecord: Codable {
    var id: String
    var keyId: KeyIdentifier
    var generation: Int
    var sealed: Data  // AES-256-GCM: nonce, ciphertext, tag
}

func symmetricKey(_ key: AccountKey) -> SymmetricKey {
    key.bytes.withUnsafeBytes { SymmetricKey(data: $0) }
}

func say(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}

let options: Options
do {
    options = try Options(Array(CommandLine.arguments.dropFirst()))
} catch {
    say("example-sync-engine: \(error)")
    exit(64)
}
let client = options.socket.map { KeyVaultClient(socketPath: $0) } ?? KeyVaultClient()
_ = FileManager.default.createFile(atPath: options.store, contents: nil)
let store = try FileHandle(forWritingTo: URL(fileURLWithPath: options.store))

var written = 0
var lastState = ""
while !FileManager.default.fileExists(atPath: options.stopFile) {
    // What the daemon says now, only to show it; `readyKey` rides out every case.
    let state: String
    switch try await client.key(options.account) {
    case .ready(let key): state = "ready, generation \(key.generation)"
    case .pending(let pending): state = "pending (\(pending.reason))"
    case .refused(let refusal): state = refusal.state.rawValue
    }
    if state != lastState {
        lastState = state
        say("key: \(state)")
    }
    let key = try await client.readyKey(options.account)
    if lastState != "ready, generation \(key.generation)" {
        lastState = "ready, generation \(key.generation)"
        say("key: \(lastState)")
    }
    let secret = symmetricKey(key)
    for _ in 0..<3 {
        let id = "record-\(written)"
        let sealed = try AES.GCM.seal(Data("the note numbered \(written)".utf8), using: secret, authenticating: Data(id.utf8))
        let record = StoredRecord(id: id, keyId: key.keyID, generation: key.generation, sealed: sealed.combined!)
        store.write(try JSONEncoder().encode(record) + Data("\n".utf8))
        written += 1
    }
    try await Task.sleep(for: options.interval)
}
try store.close()

// Read everything back, each record under the key it names.
var opened = 0, failed = 0
var generations = Set<Int>()
var keys: [KeyIdentifier: SymmetricKey] = [:]
let lines = try String(contentsOfFile: options.store, encoding: .utf8).split(separator: "\n")
for line in lines {
    let record = try JSONDecoder().decode(StoredRecord.self, from: Data(line.utf8))
    if keys[record.keyId] == nil {
        keys[record.keyId] = symmetricKey(try await client.readyKey(options.account, .keyID(record.keyId)))
    }
    let box = try AES.GCM.SealedBox(combined: record.sealed)
    if let plaintext = try? AES.GCM.open(box, using: keys[record.keyId]!, authenticating: Data(record.id.utf8)),
       String(decoding: plaintext, as: UTF8.self) == "the note numbered \(record.id.dropFirst("record-".count))" {
        opened += 1
        generations.insert(record.generation)
    } else {
        failed += 1
    }
}
let summary: [String: Any] = ["written": written, "stored": lines.count, "opened": opened, "failed": failed, "generations": generations.sorted()]
print(String(decoding: try JSONSerialization.data(withJSONObject: summary, options: [.sortedKeys]), as: UTF8.self))
