import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where the daemon's socket is when no one says.
public enum DaemonSocket {
    /// Where the daemon listens by default: `$XDG_RUNTIME_DIR/keyvaultd.sock`,
    /// else `/tmp/keyvaultd-UID/keyvaultd.sock`.
    public static var defaultPath: String {
        if let runtime = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
            return runtime + "/keyvaultd.sock"
        }
        return "/tmp/keyvaultd-\(geteuid())/keyvaultd.sock"
    }

    /// Where a client looks: `$KEYVAULT_SOCKET`, else `defaultPath`.
    public static var clientPath: String {
        if let path = ProcessInfo.processInfo.environment["KEYVAULT_SOCKET"], !path.isEmpty { return path }
        return defaultPath
    }
}
