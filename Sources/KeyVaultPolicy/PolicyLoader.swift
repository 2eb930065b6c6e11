import Foundation
#if canImport(Glibc)
import Glibc
import KeyVaultCrypto
import KeyVaultProtocol
#endif

/// Reads a policy directory: every `*.toml` file in name order. Settings
/// tables may appear once across all files; `[[rule]]`s add up.
package enum PolicyLoader {
    package static func load(directory: String, selfUID: UInt32) throws(PolicyError) -> Policy {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".toml") }.sorted()
        } catch {
            var isFolder: ObjCBool = false
            let exists = FileManager.default.fileExists(atPath: directory, isDirectory: &isFolder)
            let why = !exists ? "there is no such folder" : !isFolder.boolValue ? "it is not a folder" : "it cannot be read"
            throw PolicyError(file: directory, line: 0, message: "cannot read the policy directory: \(why) "
                              + "(leave out --policy for the built-in default, the same as the shipped policy/)")
        }
        guard !names.isEmpty else { throw PolicyError(file: directory, line: 0, message: "no .toml files in the policy directory") }
        var builder = PolicyBuilder(selfUID: selfUID)
        for name in names {
            let path = directory + "/" + name
            guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
                throw PolicyError(file: path, line: 0, message: "cannot read the file as UTF-8 text")
            }
            try builder.add(TOMLParser.parse(text, file: path), file: path)
        }
        return try builder.build()
    }

    /// One file's text, for tests and tools.
    package static func parse(_ text: String, file: String, selfUID: UInt32) throws(PolicyError) -> Policy {
        var builder = PolicyBuilder(selfUID: selfUID)
        try builder.add(TOMLParser.parse(text, file: file), file: file)
        return try builder.build()
    }
}

/// Turns parsed TOML into a `Policy`, checking every name and value and
/// pointing at the line of anything wrong.
struct PolicyBuilder {
    let selfUID: UInt32
    private var policy: Policy
    private var setSections: [String: String] = [:]
    private var lastFile = ""

    init(selfUID: UInt32) {
        self.selfUID = selfUID
        var policy = Policy.builtInDefault(selfUID: selfUID)
        policy.rules = []
        self.policy = policy
    }

    mutating func add(_ document: TOMLDocument, file: String) throws(PolicyError) {
        lastFile = file
        for table in document.tables {
            func fail(_ line: Int, _ message: String) -> PolicyError { PolicyError(file: file, line: line, message: message) }
            if table.name == "" {
                if let first = table.entries.first { throw fail(first.value.line, "'\(first.key)' must be inside a table such as [kdf] or [[rule]]") }
                continue
            }
            if table.name != "[[rule]]" {
                if let earlier = setSections[table.name] { throw fail(table.line, "[\(table.name)] is already set in \(earlier)") }
                setSections[table.name] = "\(file):\(table.line)"
            }
            var reader = TableReader(table: table, file: file)
            switch table.name {
            case "kdf":
                let ops = try reader.integer("passes", default: 3, in: 1...64)
                let mib = try reader.integer("memory_mib", default: 256, in: 1...65536)
                // A recovery kit's header may ask for at most this (by default, the same cost).
                let kitOps = try reader.integer("kit_max_passes", default: ops, in: ops...64)
                let kitMiB = try reader.integer("kit_max_memory_mib", default: mib, in: mib...65536)
                do {
                    policy.kdf = try KDFParameters(opsLimit: UInt64(ops), memLimitBytes: UInt64(mib) * 1_048_576)
                    policy.kitMaximum = (kitOps, kitMiB) == (ops, mib) ? nil : try KDFParameters(opsLimit: UInt64(kitOps), memLimitBytes: UInt64(kitMiB) * 1_048_576)
                } catch {
                    throw fail(table.line, "\(error)")
                }
            case "kdf-test":
                // Tests only: costs below one MiB so suites run fast. Never ship this.
                let ops = try reader.integer("passes", default: 1, in: 1...64)
                let kib = try reader.integer("memory_kib", default: 64, in: 8...1_048_576)
                let kitOps = try reader.integer("kit_max_passes", default: ops, in: ops...64)
                let kitKiB = try reader.integer("kit_max_memory_kib", default: kib, in: kib...1_048_576)
                do {
                    policy.kdf = try KDFParameters(opsLimit: UInt64(ops), memLimitBytes: UInt64(kib) * 1024)
                    policy.kitMaximum = (kitOps, kitKiB) == (ops, kib) ? nil : try KDFParameters(opsLimit: UInt64(kitOps), memLimitBytes: UInt64(kitKiB) * 1024)
                } catch {
                    throw fail(table.line, "\(error)")
                }
            case "limits":
                policy.maxWaitSeconds = try reader.integer("max_wait_seconds", default: 300, in: 0...3600)
            case "unlock-backoff":
                let base = try reader.integer("base_seconds", default: 1, in: 1...3600)
                let max = try reader.integer("max_seconds", default: 900, in: 1...86400)
                guard max >= base else { throw fail(table.line, "max_seconds must be at least base_seconds") }
                policy.backoff = .init(baseSeconds: base, maxSeconds: max)
            case "socket":
                if let group = try reader.optionalString("group") {
                    policy.socketGroup = try Self.resolveGroup(group.text, file: file, line: group.line)
                }
            case "rotation":
                policy.rotation.promotionDeadlineSeconds = try reader.integer("promotion_deadline_seconds", default: 86_400, in: 0...31_536_000)
                policy.rotation.rotateOnRevoke = try reader.bool("rotate_on_revoke", default: true)
                policy.rotation.maxKeyAgeSeconds = try reader.integer("max_key_age_seconds", default: 0, in: 0...315_360_000)
            case "enrollment":
                policy.enrollment.requestLifetimeSeconds = try reader.integer("request_lifetime_seconds", default: 3600, in: 1...604_800)
            case "[[rule]]":
                policy.rules.append(try rule(&reader, table: table, file: file))
            default:
                throw fail(table.line, "unknown table [\(table.name)]; known: [kdf], [limits], [unlock-backoff], [socket], [rotation], [enrollment], [[rule]]")
            }
            try reader.finish()
        }
    }

    private func rule(_ reader: inout TableReader, table: TOMLDocument.Table, file: String) throws(PolicyError) -> Policy.Rule {
        var uid: UInt32?
        var gid: UInt32?
        if let who = try reader.optionalString("uid") {
            uid = try Self.resolveUser(who.text, selfUID: selfUID, file: file, line: who.line)
        }
        if let group = try reader.optionalString("gid") {
            gid = try Self.resolveGroup(group.text, file: file, line: group.line)
        }
        guard uid != nil || gid != nil else {
            throw PolicyError(file: file, line: table.line, message: "a [[rule]] must name a uid or a gid")
        }
        let accounts = try reader.strings("accounts")
        for pattern in accounts {
            let id = pattern.text.hasSuffix("*") ? String(pattern.text.dropLast()) : pattern.text
            if !id.isEmpty, (try? AccountID(validating: id)) == nil {
                throw PolicyError(file: file, line: pattern.line, message: "'\(pattern.text)' is not an account ID or a pattern ending in '*'")
            }
        }
        var allow: Set<Permission> = []
        for name in try reader.strings("allow") {
            if name.text == "*" {
                allow.formUnion(Permission.allCases)
            } else if let permission = Permission(rawValue: name.text) {
                allow.insert(permission)
            } else {
                let known = Permission.allCases.map(\.rawValue).joined(separator: ", ")
                throw PolicyError(file: file, line: name.line, message: "unknown permission '\(name.text)'; known: \(known), or *")
            }
        }
        return Policy.Rule(uid: uid, gid: gid, accounts: accounts.map(\.text), allow: allow, source: "\(file):\(table.line)")
    }

    func build() throws(PolicyError) -> Policy {
        guard !policy.rules.isEmpty else {
            throw PolicyError(file: lastFile, line: 0, message: "the policy has no [[rule]]: nobody could use the daemon")
        }
        return policy
    }

    /// "self" (the daemon's uid), a number, or a user name.
    static func resolveUser(_ text: String, selfUID: UInt32, file: String, line: Int) throws(PolicyError) -> UInt32 {
        if text == "self" { return selfUID }
        if let number = UInt32(text) { return number }
        guard let entry = getpwnam(text) else { throw PolicyError(file: file, line: line, message: "no user named '\(text)' on this system") }
        return entry.pointee.pw_uid
    }

    static func resolveGroup(_ text: String, file: String, line: Int) throws(PolicyError) -> UInt32 {
        if let number = UInt32(text) { return number }
        guard let entry = getgrnam(text) else { throw PolicyError(file: file, line: line, message: "no group named '\(text)' on this system") }
        return entry.pointee.gr_gid
    }
}

/// Reads a table's entries by name and, at the end, refuses any it did not read.
struct TableReader {
    let table: TOMLDocument.Table
    let file: String
    private var used: Set<String> = []

    init(table: TOMLDocument.Table, file: String) {
        self.table = table
        self.file = file
    }

    mutating func integer(_ key: String, default value: Int, in range: ClosedRange<Int>) throws(PolicyError) -> Int {
        used.insert(key)
        guard let located = table.value(key) else { return value }
        guard case .integer(let n) = located.value else { throw PolicyError(file: file, line: located.line, message: "'\(key)' must be a whole number") }
        guard let int = Int(exactly: n), range.contains(int) else {
            throw PolicyError(file: file, line: located.line, message: "'\(key)' must be between \(range.lowerBound) and \(range.upperBound), got \(n)")
        }
        return int
    }

    mutating func bool(_ key: String, default value: Bool) throws(PolicyError) -> Bool {
        used.insert(key)
        guard let located = table.value(key) else { return value }
        guard case .bool(let b) = located.value else { throw PolicyError(file: file, line: located.line, message: "'\(key)' must be true or false") }
        return b
    }

    mutating func optionalString(_ key: String) throws(PolicyError) -> (text: String, line: Int)? {
        used.insert(key)
        guard let located = table.value(key) else { return nil }
        switch located.value {
        case .string(let s): return (s, located.line)
        case .integer(let n): return (String(n), located.line)
        case .bool, .array: throw PolicyError(file: file, line: located.line, message: "'\(key)' must be a string or a number")
        }
    }

    mutating func strings(_ key: String) throws(PolicyError) -> [(text: String, line: Int)] {
        used.insert(key)
        guard let located = table.value(key) else {
            throw PolicyError(file: file, line: table.line, message: "'\(key)' is missing; it takes a list of strings")
        }
        guard case .array(let items) = located.value else {
            throw PolicyError(file: file, line: located.line, message: "'\(key)' must be a list of strings, like [\"read\"]")
        }
        var out: [(String, Int)] = []
        for item in items {
            guard case .string(let s) = item.value else { throw PolicyError(file: file, line: item.line, message: "'\(key)' must hold only strings") }
            out.append((s, item.line))
        }
        return out
    }

    func finish() throws(PolicyError) {
        for entry in table.entries where !used.contains(entry.key) {
            throw PolicyError(file: file, line: entry.value.line, message: "unknown setting '\(entry.key)' in [\(table.name.trimmingCharacters(in: CharacterSet(charactersIn: "[]")))]")
        }
    }
}
