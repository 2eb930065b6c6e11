import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Where the daemon's socket is when no one says.
public enum DaemonSocket {
    /// Where the daemon listens by default: `$XDG_RUNTIME_DIR/keyvaultd.sock`,
    /// else `$XDG_STATE_HOME/keyvaultd/keyvaultd.sock`, else
    /// `~/.local/state/keyvaultd/keyvaultd.sock`: a folder in the user's own home,
    /// which no other user can make first (a shared `/tmp` folder could be).
    public static var defaultPath: String {
        let environment = ProcessInfo.processInfo.environment
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty { return runtime + "/keyvaultd.sock" }
        if let state = environment["XDG_STATE_HOME"], !state.isEmpty { return state + "/keyvaultd/keyvaultd.sock" }
        return home + "/.local/state/keyvaultd/keyvaultd.sock"
    }

    /// `$HOME`, else the passwd entry's home: the one home every default path starts from
    /// (the data folder's too), so a daemon started with another `$HOME` keeps both in it.
    package static var home: String {
        ProcessInfo.processInfo.environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? FileManager.default.homeDirectoryForCurrentUser.path
    }

    /// Where a client looks: `$KEYVAULT_SOCKET`, else `defaultPath`.
    public static var clientPath: String {
        if let path = ProcessInfo.processInfo.environment["KEYVAULT_SOCKET"], !path.isEmpty { return path }
        return defaultPath
    }
}
