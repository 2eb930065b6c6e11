import Foundation
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultStore

public enum DefaultPaths {
    /// `$XDG_DATA_HOME/keyvaultd`, else `~/.local/share/keyvaultd`.
    public static var dataDirectory: String {
        let environment = ProcessInfo.processInfo.environment
        if let data = environment["XDG_DATA_HOME"], !data.isEmpty { return data + "/keyvaultd" }
        return NSHomeDirectory() + "/.local/share/keyvaultd"
    }
}
