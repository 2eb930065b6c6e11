import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A person's or a script's one-shot read, `keyvault key get --raw hex`, from the
/// process's start to its exit, beside ssh-agent's round trip as `ssh-add -l` makes it
/// (a fresh process each, against an agent started for the run), alternating run by run
/// in the same run. The daemon is the client bench's, in a process of its own; the CLI is
/// the release build beside this bench binary.
enum CLIStartBench {
    struct Result {
        var cli: [Double]
        var sshAdd: [Double]
        /// The release archive's executable (static, stripped), not the bench's build.
        var shipped: Bool
        var ratio: Double { Percentile.of(cli, 0.5) / Percentile.of(sshAdd, 0.5) }
    }

    static let goal = 2.0

    static func measure(runs: Int, in directory: String) async throws -> Result {
        // The shipped one when given ($KEYVAULT_BENCH_CLI: the release archive's bin/keyvault), else the one built beside this bench.
        let own = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let cli = ProcessInfo.processInfo.environment["KEYVAULT_BENCH_CLI"]
            ?? URL(fileURLWithPath: own).deletingLastPathComponent().appendingPathComponent("keyvault").path
        guard FileManager.default.isExecutableFile(atPath: cli) else { throw BenchError("no keyvault beside the bench (swift build -c release --product keyvault)") }
        guard let sshAdd = ["/usr/bin/ssh-add", "/bin/ssh-add"].first(where: FileManager.default.isExecutableFile(atPath:)) else {
            throw BenchError("no ssh-add to compare with")
        }
        let folder = directory + "/cli"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let daemon = try await ClientReadsBench.startDaemon(in: folder)
        defer { daemon.stop() }

        let agentSocket = folder + "/agent.sock"
        let agent = try await AgentConnection.startAgent(at: agentSocket)
        defer {
            kill(agent.processIdentifier, SIGKILL)
            agent.waitUntilExit()
        }

        let read = [cli, "key", "get", "--account", "bench", "--raw", "hex", "--socket", daemon.socket]
        let list = [sshAdd, "-l"]
        var result = Result(cli: [], sshAdd: [], shipped: ProcessInfo.processInfo.environment["KEYVAULT_BENCH_CLI"] != nil)
        for run in 0..<(runs + 5) {
            for (index, command) in [read, list].enumerated().shuffled() {
                let start = ContinuousClock.now
                let status = try spawnAndWait(command, environment: ["SSH_AUTH_SOCK=" + agentSocket, "PATH=/usr/bin:/bin"])
                let elapsed = Load.seconds(ContinuousClock.now - start)
                // ssh-add -l answers 1 for an agent with no identities (the round trip is what is measured), 2 if it reached none.
                guard index == 1 || status == 0 else { throw BenchError("keyvault key get exited \(status)") }
                guard index == 0 || status <= 1 else { throw BenchError("ssh-add -l exited \(status): it did not reach the agent") }
                guard run >= 5 else { continue }  // after a warm-up (the page cache)
                if index == 0 { result.cli.append(elapsed) } else { result.sshAdd.append(elapsed) }
            }
        }
        return result
    }
}

/// Runs `command` with its output to /dev/null and waits for its exit status: `posix_spawn` and
/// `waitpid` themselves (Foundation's `Process` waits on a run loop, tens of milliseconds more
/// than the commands measured).
private func spawnAndWait(_ command: [String], environment: [String]) throws -> Int32 {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    let argv = command.map { strdup($0) } + [nil]
    let envp = environment.map { strdup($0) } + [nil]
    defer { for pointer in argv + envp { free(pointer) } }
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, command[0], &actions, nil, argv, envp)
    guard spawned == 0 else { throw BenchError("posix_spawn \(command[0]): \(String(cString: strerror(spawned)))") }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 {
        guard errno == EINTR else { throw BenchError("waitpid \(command[0]): \(String(cString: strerror(errno)))") }
    }
    return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
}

extension Report {
    var cliStartSection: String {
        guard let cli = cliStart else {
            return cliStartMissing.map { "## The CLI's one-shot read\n\nNot measured: \($0)\n\n" } ?? ""
        }
        func ms(_ samples: [Double], _ p: Double) -> String { String(format: "%.1f ms", Percentile.of(samples, p) * 1000) }
        return """
            ## The CLI's one-shot read

            `keyvault key get --account bench --raw hex` (\(cli.shipped ? "the release archive's executable: the Swift runtime linked in, stripped" : "the release build beside the bench, the Swift runtime linked in as `make bench` builds it"); a new process each: start, check the socket's \
            path and peer, one request, print, exit) beside `ssh-add -l` against an ssh-agent started for the run (a new \
            process each, one round trip to the agent), \(cli.cli.count) runs each, alternating in a shuffled order, after a \
            warm-up; the daemon is the client bench's, in a process of its own.

            | one-shot | p50 | p90 | p50 / ssh-add |
            |---|---:|---:|---:|
            | `ssh-add -l` (baseline) | \(ms(cli.sshAdd, 0.5)) | \(ms(cli.sshAdd, 0.9)) | 1.00 |
            | `keyvault key get --raw hex` | \(ms(cli.cli, 0.5)) | \(ms(cli.cli, 0.9)) | **\(String(format: "%.2f", cli.ratio))** |

            Goal: at most \(String(format: "%.0f", CLIStartBench.goal))× `ssh-add -l`: **\(String(format: "%.2f", cli.ratio))** \
            (\(cli.ratio <= CLIStartBench.goal ? "met" : "not met")).


            """
    }
}

/// The shipped executables' stripped sizes and the archive's, as the last `make release` wrote them
/// (`.build/release-archive/sizes.tsv`: a name and a size in bytes a line).
enum ReleaseSizes {
    static let goal = 25 << 20

    static func section(file: String = ".build/release-archive/sizes.tsv") -> String {
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
            return "## The shipped executables' sizes\n\nNot measured: no \(file) (run `make release` before `make bench`)\n\n"
        }
        var rows = ""
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: "\t")
            guard parts.count == 2, let bytes = Int(parts[1]) else { continue }
            let mib = String(format: "%.1f", Double(bytes) / 1_048_576)
            let goal = parts[0] == "archive" ? "-" : (bytes <= goal ? "met" : "not met")
            rows += "| \(parts[0]) | \(bytes) | \(mib) MiB | \(goal) |\n"
        }
        return """
            ## The shipped executables' sizes

            Each executable of the release archive as `make release` ships it (the Swift runtime linked in, stripped), \
            and the archive; goal: each executable at most 25 MiB. `ssh-add`, the one-shot baseline above, is 0.5 MB.

            | file | bytes | size | goal |
            |---|---:|---:|---|
            \(rows)
            `keyvault` links FoundationEssentials and never Foundation's classes (`JSONSerialization`, `FileHandle`, \
            formatters), so neither Foundation nor its ICU data is linked in. `keyvaultd` and `keyvault-relay` link \
            Foundation through the dependencies chosen for them: GRDB (`NSCache`, `DateFormatter`, `NSDecimalNumber`), \
            Hummingbird (`DateFormatter`), and for the relay postgres-nio and jwt-kit as well.


            """
    }
}
