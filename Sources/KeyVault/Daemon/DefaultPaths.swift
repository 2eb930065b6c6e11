import Foundation
import KeyVaultUnixSocket
import KeyVaultVault
import KeyVaultEngine
import KeyVaultPolicy

package enum DefaultPaths {
    /// `$XDG_DATA_HOME/keyvaultd`, else `~/.local/share/keyvaultd`.
    package static var dataDirectory: String {
        let environment = ProcessInfo.processInfo.environment
        if let data = environment["XDG_DATA_HOME"], !data.isEmpty { return data + "/keyvaultd" }
        return DaemonSocket.home + "/.local/share/keyvaultd"
    }

    /// The default data folder, its missing parents made first (0700, as the XDG base
    /// directory spec asks); the folder itself is made and checked by the vault.
    package static func madeDataDirectoryParents() throws -> String {
        let path = dataDirectory
        try DataDirectory.makeParents(of: path)
        return path
    }
}
