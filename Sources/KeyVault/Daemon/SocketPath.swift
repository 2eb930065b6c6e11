package import Foundation
#if canImport(Glibc)
import Glibc
#endif
import KeyVaultUnixSocket
import KeyVaultEngine
import KeyVaultPolicy

/// The socket file: its default place, the refusal to start over a live
/// daemon, and its permissions once bound.
package enum SocketPath {
    package enum Problem: Error, CustomStringConvertible {
        case live(String)
        case notASocket(String)
        case tooLong(String)

        package var description: String {
            switch self {
            case .live(let path): return "another keyvaultd is answering on \(path); stop it first or choose another --socket"
            case .notASocket(let path): return "\(path) exists and is not a socket; refusing to replace it"
            case .tooLong(let path): return "the socket path \(path) is longer than a Unix socket allows (107 bytes)"
            }
        }
    }

    /// Refuses a path a live daemon still answers on; removes a stale socket.
    package static func claim(_ path: String) throws {
        guard path.utf8.count < 108 else { throw Problem.tooLong(path) }
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        guard (info.st_mode & S_IFMT) == S_IFSOCK else { throw Problem.notASocket(path) }
        if isAnswering(path) { throw Problem.live(path) }
        unlink(path)
    }

    /// True when something accepts connections on the socket.
    package static func isAnswering(_ path: String) -> Bool {
        guard case .success(let fd) = connect(path) else { return false }
        close(fd)
        return true
    }

    /// A stream socket connected to `path`: its descriptor (the caller closes
    /// it), or the `errno` of the call that failed (nothing left open).
    package static func connect(_ path: String) -> Result<Int32, POSIXError> {
        do throws(UnixSocket.Failure) {
            return .success(try UnixSocket.connect(path, expectedUID: nil))
        } catch .cannotConnect(_, let code) {
            return .failure(POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO))
        } catch {
            return .failure(POSIXError(.ENAMETOOLONG))
        }
    }

    /// 0600, or 0660 owned by the policy's group.
    package static func restrict(_ path: String, group: UInt32?) {
        if let group {
            _ = chown(path, uid_t.max, group)
            _ = chmod(path, 0o660)
        } else {
            _ = chmod(path, 0o600)
        }
    }
}
