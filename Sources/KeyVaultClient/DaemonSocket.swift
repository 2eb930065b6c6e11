import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where a client looks for the daemon when it is not told.
package enum DaemonSocket {
    /// `$XDG_RUNTIME_DIR/keyvaultd.sock`, else `/tmp/keyvaultd-UID/keyvaultd.sock`.
    package static var defaultPath: String {
        if let runtime = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
            return runtime + "/keyvaultd.sock"
        }
        return "/tmp/keyvaultd-\(geteuid())/keyvaultd.sock"
    }
}
