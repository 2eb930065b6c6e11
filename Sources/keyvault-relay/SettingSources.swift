import ArgumentParser
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where a setting the flags leave out is looked for: the environment, then systemd's
/// credentials (`LoadCredential=`, files in `$CREDENTIALS_DIRECTORY`). A flag wins over
/// both, the environment over a credential.
struct SettingSources {
    /// A value and where it came from, to name in an error (never the value itself if it may be secret).
    struct Value {
        let text: String
        let origin: String
    }

    let environment: [String: String]

    init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.environment = environment
    }

    private var credentialsDirectory: String? {
        guard let folder = environment["CREDENTIALS_DIRECTORY"], !folder.isEmpty else { return nil }
        return folder
    }

    /// The flag's value, else the variable's (an empty one counts as unset), else the credential's; nil if none gives it.
    func value(of setting: RelaySetting, flag: String?) throws -> Value? {
        if let flag { return Value(text: flag, origin: setting.flag) }
        if let text = environment[setting.variable], !text.isEmpty { return Value(text: text, origin: setting.variable) }
        guard let folder = credentialsDirectory else { return nil }
        let path = folder + "/" + setting.credential
        guard let content = try Self.readCredential(path, whole: !setting.namesFile) else { return nil }
        return Value(text: setting.namesFile ? path : content, origin: "the credential \(path)")
    }

    /// A switch: set by its flag, else by `true`/`false` (or 1/0, yes/no) in the variable or credential.
    func isOn(_ setting: RelaySetting, flag: Bool) throws -> Bool {
        if flag { return true }
        guard let value = try value(of: setting, flag: nil) else { return false }
        switch value.text.lowercased() {
        case "1", "true", "yes", "on": return true
        case "0", "false", "no", "off": return false
        default: throw ValidationError("\(value.origin) takes true or false")
        }
    }

    /// nil if the file is not there. `whole`: its content, one trailing newline dropped; otherwise
    /// only checked readable (a file a credential names is opened by what uses it). An error names
    /// the file and why, never what is in it.
    private static func readCredential(_ path: String, whole: Bool) throws -> String? {
        var info = stat()
        if stat(path, &info) != 0 {
            if errno == ENOENT { return nil }
            throw ValidationError("cannot read the credential \(path): \(String(cString: strerror(errno)))")
        }
        guard info.st_mode & S_IFMT == S_IFREG else { throw ValidationError("the credential \(path) is not a file") }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ValidationError("cannot read the credential \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        guard whole else { return "" }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(fd, &buffer, buffer.count)
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw ValidationError("cannot read the credential \(path): \(String(cString: strerror(errno)))") }
            if count == 0 { break }
            bytes += buffer.prefix(count)
        }
        if bytes.last == UInt8(ascii: "\n") { bytes.removeLast() }
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw ValidationError("the credential \(path) is not UTF-8 text") }
        return text
    }
}
