import Foundation
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultAccount
import KeyVaultVault
import KeyVaultRelay
import KeyVaultRelayClient

package enum DefaultPaths {
    /// `$XDG_DATA_HOME/keyvaultd`, else `~/.local/share/keyvaultd`.
    package static var dataDirectory: String {
        let environment = ProcessInfo.processInfo.environment
        if let data = environment["XDG_DATA_HOME"], !data.isEmpty { return data + "/keyvaultd" }
        return NSHomeDirectory() + "/.local/share/keyvaultd"
    }
}
