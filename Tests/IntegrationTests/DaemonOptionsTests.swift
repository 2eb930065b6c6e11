import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// keyvaultd's options as operators and scripts meet them: log level and format, the
/// default data folder under a fresh `$XDG_DATA_HOME`, and `--help`.
@Suite("keyvaultd's options: --log-level, --log-format, the default data folder, --help")
struct DaemonOptionsTests {
    static var keyvaultd: String { DaemonProcess.binaryDirectory + "/keyvaultd" }

    @Test("an unknown --log-level is a usage error (64) naming the levels there are")
    func unknownLogLevel() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        // A data folder that cannot be made: a daemon that took the level anyway fails (1) instead of serving on.
        let result = try await run(Self.keyvaultd, ["--log-level", "verbose", "--data-dir", "/dev/null/data",
                                                    "--socket", daemon.socket, "--policy", daemon.policyDirectory])
        #expect(result.status == 64, "\(result.err)")
        #expect(result.err.contains("--log-level takes one of trace, debug, info, notice, warning, error, critical, not 'verbose'"), "\(result.err)")
        let format = try await run(Self.keyvaultd, ["--log-format", "yaml", "--data-dir", "/dev/null/data",
                                                    "--socket", daemon.socket, "--policy", daemon.policyDirectory])
        #expect(format.status == 64)
        #expect(format.err.contains("--log-format takes one of text, json, not 'yaml'"), "\(format.err)")
    }

    @Test("--log-format json: every line of standard error is one JSON object, running and failing to start")
    func jsonLogs() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        try await daemon.start(extraArguments: ["--log-format", "json", "--log-level", "debug"])
        _ = try await daemon.request("POST", "/v1/accounts", json: ["user": "jay", "passphrase": "pw"])
        #expect(await daemon.stop() == 0)
        let objects = try Self.jsonLines(daemon.logText())
        #expect(objects.contains { $0["message"] == "keyvaultd ready" && $0["socket"] == daemon.socket && $0["level"] == "notice" })
        #expect(objects.contains { $0["message"] == "keyvaultd stopped" })
        for object in objects {
            #expect(object["label"] != nil && object["timestamp"]?.hasSuffix("Z") == true, "\(object)")
        }

        // A daemon that cannot start says why in a log object, and prints no sentence beside it.
        try daemon.writePolicy("[[rule]]\nuid = \"self\"\naccounts = [\"*\"]\nallow = [\"raed\"]\n")
        let failed = try await run(Self.keyvaultd, ["--log-format", "json", "--data-dir", daemon.dataDirectory,
                                                    "--socket", daemon.socket, "--policy", daemon.policyDirectory])
        #expect(failed.status == 78)
        let said = try Self.jsonLines(failed.err)
        #expect(said.contains { $0["level"] == "critical" && $0["problem"]?.contains("test.toml:4: unknown permission 'raed'") == true },
                "\(failed.err)")
    }

    /// Paths as a person types them: relative to the working folder, a folder with a trailing slash.
    /// (This toolchain's Foundation traps on `NSString.deletingLastPathComponent` of "." and of "data/":
    /// `--socket kv.sock` crashed the daemon at its start.)
    @Test("relative paths and trailing slashes: --socket kv.sock, --data-dir data/, --policy policy/, --relay relay.sqlite")
    func relativePaths() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        // From the daemon's root, these name the same places as the absolute paths the other tests give.
        let process = try await Self.startDaemon(daemon, ["--data-dir", "data/", "--socket", "kv.sock", "--policy", "policy/", "--relay", "relay.sqlite"],
                                                 launcher: ["/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", daemon.root])
        defer { process.killAndReap() }
        #expect(try await daemon.request("POST", "/v1/accounts", json: ["user": "here", "passphrase": "pw"]).status == 200)
        #expect(try await daemon.request("GET", "/v1/accounts/here/keys/current").status == 200)
        #expect(FileManager.default.fileExists(atPath: daemon.dataDirectory + "/vault.sqlite"))
        #expect(FileManager.default.fileExists(atPath: daemon.root + "/relay.sqlite"))
        process.signal(SIGTERM)
        #expect(await process.wait() == 0, "\(daemon.logText())")
    }

    /// A data folder others may write is refused, and left as it was: the daemon once made `/tmp`
    /// 0700 when given `--data-dir ..` from a folder in it (it tightens a folder of its own).
    @Test("a shared --data-dir (1777), or a wider one holding other files, is refused and left as it is; an empty one is made 0700")
    func sharedDataFolderRefused() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        let shared = daemon.root + "/shared"
        #expect(mkdir(shared, 0o700) == 0 && chmod(shared, 0o1777) == 0)
        let result = try await run(Self.keyvaultd, ["--data-dir", shared, "--socket", daemon.socket, "--policy", daemon.policyDirectory])
        #expect(result.status != 0)
        #expect(result.err.contains("is a shared folder (mode 1777)"), "\(result.err)")
        var info = stat()
        #expect(stat(shared, &info) == 0 && info.st_mode & 0o7777 == 0o1777, "the shared folder's mode was changed")

        // A folder of 0755 that holds something else (a home, say) is refused and left 0755; an empty one is made 0700.
        let home = daemon.root + "/home"
        #expect(mkdir(home, 0o755) == 0 && chmod(home, 0o755) == 0 && creat(home + "/.profile", 0o644) >= 0)
        let refused = try await run(Self.keyvaultd, ["--data-dir", home, "--socket", daemon.socket, "--policy", daemon.policyDirectory])
        #expect(refused.status != 0)
        #expect(refused.err.contains("is mode 755 and holds more than the vault"), "\(refused.err)")
        #expect(stat(home, &info) == 0 && info.st_mode & 0o7777 == 0o755, "a folder holding other files was changed")
        let empty = daemon.root + "/empty"
        #expect(mkdir(empty, 0o755) == 0 && chmod(empty, 0o755) == 0)
        let process = try await Self.startDaemon(daemon, ["--data-dir", empty, "--socket", daemon.socket, "--policy", daemon.policyDirectory])
        defer { process.killAndReap() }
        #expect(stat(empty, &info) == 0 && info.st_mode & 0o7777 == 0o700, "an empty folder was not made 0700")
    }

    @Test("text logs quote a value holding a space, a quote or '='")
    func textValuesQuoted() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        let policy = daemon.root + "/my \"policy\" dir=1"
        try FileManager.default.copyItem(atPath: daemon.policyDirectory, toPath: policy)
        let process = try await Self.startDaemon(daemon, ["--data-dir", daemon.dataDirectory, "--socket", daemon.socket, "--policy", policy])
        defer { process.killAndReap() }
        process.signal(SIGTERM)
        #expect(await process.wait() == 0)
        let line = try #require(daemon.logText().split(separator: "\n").first { $0.contains("policy loaded") }, "\(daemon.logText())")
        let quoted = #"from="\#(daemon.root)/my \"policy\" dir=1""#
        #expect(line.contains(" " + quoted + " "), "\(line)")
    }

    @Test("with $XDG_DATA_HOME in folders not made yet, they are made 0700 and the daemon runs; unsafe folders are still refused")
    func freshDataHome() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        let dataHome = daemon.root + "/x/nested/data"
        let process = try await Self.startDaemon(daemon, ["--socket", daemon.socket, "--policy", daemon.policyDirectory],
                                                 environment: ["XDG_DATA_HOME": dataHome])
        defer { process.killAndReap() }
        _ = try await daemon.request("POST", "/v1/accounts", json: ["user": "xdg", "passphrase": "pw"])
        process.signal(SIGTERM)
        #expect(await process.wait() == 0)
        for folder in [daemon.root + "/x", daemon.root + "/x/nested", dataHome, dataHome + "/keyvaultd"] {
            var info = stat()
            #expect(stat(folder, &info) == 0, "\(folder) was not made")
            #expect(info.st_mode & 0o777 == 0o700, "\(folder) is \(String(info.st_mode & 0o777, radix: 8))")
        }
        #expect(FileManager.default.fileExists(atPath: dataHome + "/keyvaultd/vault.sqlite"))

        // What is there already is checked as before: a file in the folder's place, a folder of another user.
        let filed = daemon.root + "/filed"
        try FileManager.default.createDirectory(atPath: filed, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: filed + "/keyvaultd", contents: Data()))
        let notAFolder = try await run(Self.keyvaultd, ["--socket", daemon.socket, "--policy", daemon.policyDirectory],
                                       environment: ["XDG_DATA_HOME": filed])
        #expect(notAFolder.status == 1)
        #expect(notAFolder.err.contains("\(filed)/keyvaultd exists and is not a directory"), "\(notAFolder.err)")
        let theirs = daemon.root + "/theirs"
        try FileManager.default.createDirectory(atPath: theirs + "/keyvaultd", withIntermediateDirectories: true)
        #expect(chown(theirs + "/keyvaultd", 65534, 65534) == 0)
        let foreign = try await run(Self.keyvaultd, ["--socket", daemon.socket, "--policy", daemon.policyDirectory],
                                    environment: ["XDG_DATA_HOME": theirs])
        #expect(foreign.status == 1)
        #expect(foreign.err.contains("belongs to another user"), "\(foreign.err)")
    }

    @Test("--help states each option's default once, on both executables")
    func helpDefaultsOnce() async throws {
        for binary in ["keyvaultd", "keyvault-relay"] {
            let help = try await run(DaemonProcess.binaryDirectory + "/" + binary, ["--help"])
            #expect(help.status == 0, "\(binary): \(help.err)")
            let blocks = Self.optionBlocks(help.out)
            #expect(blocks.count > 8, "\(binary): \(help.out)")
            for block in blocks {
                let defaults = block.lowercased().components(separatedBy: "default").count - 1
                #expect(defaults <= 1, "\(binary): \(block)")
            }
            #expect(blocks.contains { $0.contains("--log-format") && $0.contains("(default: text)") }, "\(binary)")
            #expect(blocks.contains { $0.contains("--request-timeout") && $0.contains("(default: 10)") }, "\(binary)")
        }
    }

    /// Each option's lines in ArgumentParser's help: from a line starting `  -` to the next.
    static func optionBlocks(_ help: String) -> [String] {
        var blocks: [String] = []
        for line in help.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("  -") {
                blocks.append(String(line))
            } else if line.hasPrefix("   "), !blocks.isEmpty {
                blocks[blocks.count - 1] += "\n" + line
            }
        }
        return blocks
    }

    /// Each non-empty line as a JSON object of strings with a level and a message; a line that is not fails the test.
    /// Each line as one JSON object of strings and numbers (numbers given as their text here);
    /// `numbers` names the fields that must be numbers wherever they appear (a status, a duration).
    static func jsonLines(_ text: String, numbers: Set<String> = ["status", "seconds"]) throws -> [[String: String]] {
        var objects: [[String: String]] = []
        for line in text.split(separator: "\n") {
            let parsed = try #require(try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not a JSON object: \(line)")
            var object: [String: String] = [:]
            for (key, value) in parsed {
                if let string = value as? String {
                    #expect(!numbers.contains(key), "\(key) written as a string: \(line)")
                    object[key] = string
                } else {
                    let number = try #require(value as? NSNumber, "neither a string nor a number: \(key) in \(line)")
                    object[key] = number.stringValue
                }
            }
            #expect(object["level"] != nil && object["message"] != nil, "\(line)")
            objects.append(object)
        }
        #expect(!objects.isEmpty)
        return objects
    }

    /// keyvaultd with these arguments alone (DaemonProcess.start always names a data folder), logging to the daemon's log, once it answers.
    /// `launcher`: a command that execs keyvaultd with the arguments after it (`sh -c 'cd …; exec "$@"'`).
    static func startDaemon(_ daemon: DaemonProcess, _ arguments: [String], environment: [String: String] = [:],
                            launcher: [String] = []) async throws -> ChildProcess {
        let command = launcher + [keyvaultd] + arguments
        let process = try ChildProcess(command[0], Array(command.dropFirst()), environment: environment, stdoutPath: daemon.logPath, stderrPath: daemon.logPath)
        for _ in 0..<400 {
            if let status = process.poll() { throw TestFailure("keyvaultd exited with \(status): \(daemon.logText())") }
            if let reply = try? await daemon.request("GET", "/v1/health"), reply.status == 200 { return process }
            try await Task.sleep(for: .milliseconds(25))
        }
        process.killAndReap()
        throw TestFailure("keyvaultd did not become ready: \(daemon.logText())")
    }
}
