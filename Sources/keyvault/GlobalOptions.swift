import Foundation
import KeyVaultCrypto
import KeyVaultProtocol

/// Options that, as in git, docker or systemctl, may come before the
/// subcommand: `keyvault --socket PATH key get …`. ArgumentParser reads a
/// subcommand's options only after its name, so these are taken off the front
/// of the arguments before parsing and handed on through the environment
/// variable that the subcommands' `SocketOptions` already read.
enum GlobalOptions {
    /// Removes the leading `--socket PATH` / `--socket=PATH` (before the first
    /// word that is not an option) and answers the arguments left.
    static func extract(_ arguments: [String], setEnvironment: (String, String) -> Void) throws -> [String] {
        var rest = arguments[...]
        while let first = rest.first, first.hasPrefix("-") {
            if first == "--socket" {
                rest = rest.dropFirst()
                guard let path = rest.first, !path.isEmpty else { throw GlobalOptionError("--socket takes a path") }
                setEnvironment("KEYVAULT_SOCKET", path)
                rest = rest.dropFirst()
            } else if first.hasPrefix("--socket=") {
                let path = String(first.dropFirst("--socket=".count))
                guard !path.isEmpty else { throw GlobalOptionError("--socket takes a path") }
                setEnvironment("KEYVAULT_SOCKET", path)
                rest = rest.dropFirst()
            } else {
                // --help, --version and the like: the root command answers them.
                break
            }
        }
        return Array(rest)
    }
}

struct GlobalOptionError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
