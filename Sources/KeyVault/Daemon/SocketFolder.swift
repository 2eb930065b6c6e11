import KeyVaultVault
import Foundation
#if canImport(Glibc)
import Glibc
import KeyVaultEngine
import KeyVaultPolicy
#endif

/// The folder the socket lives in, made or checked before the socket is bound.
///
/// Whoever can write a socket's folder can move the socket aside and listen in
/// its place, and so hear every passphrase a client sends. As ssh-agent and
/// systemd's runtime folders do, the daemon serves only from a folder that
/// this user owns and nobody else can write, on a path no other user can
/// change: each folder above it is owned by this user or root, and one that
/// others may write (`/tmp`) is sticky, so they cannot rename what is in it.
package enum SocketFolder {
    package enum Problem: Error, CustomStringConvertible, Equatable {
        case cannotCreate(String, errno: Int32)
        case notAFolder(String)
        case foreignOwner(String, owner: UInt32, me: UInt32)
        case writableByOthers(String, mode: UInt32)
        case unsafeAncestor(String, owner: UInt32, mode: UInt32)

        package var description: String {
            switch self {
            case .cannotCreate(let path, let code):
                return "cannot create the socket folder \(path): \(String(cString: strerror(code)))"
            case .notAFolder(let path):
                return "the socket folder \(path) is not a folder (a link or a file stands there); refusing to serve from it"
            case .foreignOwner(let path, let owner, let me):
                return "the socket folder \(path) belongs to uid \(owner), not to this daemon's uid \(me): another user may have made it "
                    + "to take the socket's place; remove it, or choose another --socket (or set $XDG_RUNTIME_DIR)"
            case .writableByOthers(let path, let mode):
                return "the socket folder \(path) can be written by others (mode \(String(mode, radix: 8))): they could replace the socket; "
                    + "make it 0700 (chmod 700 \(path)) or choose another --socket"
            case .unsafeAncestor(let path, let owner, let mode):
                return "the folder \(path), above the socket, belongs to uid \(owner) or can be written by others (mode \(String(mode, radix: 8))) "
                    + "and is not sticky: another user could rename the socket's folder; choose another --socket"
            }
        }
    }

    /// Makes the socket's folder (0700, or 0710 with `group` so its members reach
    /// the socket) if it is missing, then checks it and every folder above it.
    package static func prepare(forSocket socketPath: String, group: UInt32?) throws {
        let folder = DataDirectory.folder(of: socketPath)
        let path = folder.isEmpty ? "." : folder
        // Missing folders above it are made 0700, as the XDG base directory spec asks (`~/.local/state`).
        try? DataDirectory.makeParents(of: path)
        if mkdir(path, 0o700) == 0 {
            if let group {
                _ = chown(path, uid_t.max, group)
                _ = chmod(path, 0o710)
            }
        } else if errno != EEXIST {
            throw Problem.cannotCreate(path, errno: errno)
        }
        try check(path, me: geteuid())
    }

    /// The folder: a real folder (not a link), this user's (root's, for root's
    /// own runtime folders), writable by nobody else. Above it: see the type.
    static func check(_ folder: String, me: UInt32) throws {
        var info = stat()
        guard lstat(folder, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else { throw Problem.notAFolder(folder) }
        guard info.st_uid == me else { throw Problem.foreignOwner(folder, owner: info.st_uid, me: me) }
        guard info.st_mode & 0o022 == 0 else { throw Problem.writableByOthers(folder, mode: info.st_mode & 0o7777) }

        // The folders above, as the path resolves (a link such as /var/run → /run is followed).
        guard let resolved = realpath(folder, nil) else { throw Problem.notAFolder(folder) }
        defer { free(resolved) }
        var above = DataDirectory.folder(of: String(cString: resolved))
        while !above.isEmpty {
            guard stat(above, &info) == 0 else { throw Problem.notAFolder(above) }
            let trustedOwner = info.st_uid == me || info.st_uid == 0
            let othersWrite = info.st_mode & 0o022 != 0
            let sticky = info.st_mode & UInt32(S_ISVTX) != 0
            guard trustedOwner, !othersWrite || sticky else {
                throw Problem.unsafeAncestor(above, owner: info.st_uid, mode: info.st_mode & 0o7777)
            }
            if above == "/" { break }
            above = DataDirectory.folder(of: above)
        }
    }
}
