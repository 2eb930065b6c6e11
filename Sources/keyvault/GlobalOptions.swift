import FoundationEssentials
import KeyVaultClient

/// Options that, as in git, docker or systemctl, may come before the
/// subcommand: `keyvault --socket PATH key get …`. ArgumentParser reads a
/// subcommand's options only after its name, so these are taken off the front
/// of the arguments before parsing and handed on through the environment
/// variable that the subcommands' `SocketOptions` already read.
enum GlobalOptions {
    /// The global options, each with the environment variable it sets and what its value is.
    static let known = [("--socket", "KEYVAULT_SOCKET", "a path"), ("--daemon-uid", "KEYVAULT_DAEMON_UID", "a uid or a user name")]

    /// Removes the leading `--socket PATH` / `--socket=PATH` and `--daemon-uid UID`
    /// (before the first word that is not an option) and answers the arguments left.
    static func extract(_ arguments: [String], setEnvironment: (String, String) -> Void) throws -> [String] {
        var rest = arguments[...]
        outer: while let first = rest.first, first.hasPrefix("-") {
            for (option, variable, what) in known {
                if first == option {
                    rest = rest.dropFirst()
                    guard let value = rest.first, !value.isEmpty else { throw GlobalOptionError("\(option) takes \(what)") }
                    setEnvironment(variable, value)
                    rest = rest.dropFirst()
                    continue outer
                } else if first.hasPrefix(option + "=") {
                    let value = String(first.dropFirst(option.count + 1))
                    guard !value.isEmpty else { throw GlobalOptionError("\(option) takes \(what)") }
                    setEnvironment(variable, value)
                    rest = rest.dropFirst()
                    continue outer
                }
            }
            // --help, --version and the like: the root command answers them.
            break
        }
        return Array(rest)
    }
}

struct GlobalOptionError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
