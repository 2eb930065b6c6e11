import KeyVaultUnixSocket
#if canImport(Glibc)
import Glibc
#endif

/// Connects to the daemon the client means to talk to, and to no one else,
/// before a byte is sent.
///
/// Two checks, the path's first. The path, as it resolves: the socket belongs
/// to the expected uid; its folder to that uid or root and writable by no one
/// else (the daemon's own rule for its socket folder); every folder above
/// them to that uid or root, and one others may write is sticky (`/tmp`). So
/// no one else can put their own socket in its place. Then the peer: the
/// connection made here (bounded in time) is served by the expected uid, in
/// the kernel's word (`SO_PEERCRED`), and it is the one that carries the
/// requests: whoever serves the path later, this connection's peer stays.
enum SocketTrust {
    /// How long the check's own connection may wait for a daemon whose queue is full.
    static let connectTimeoutSeconds = 5

    /// A connected descriptor (the caller owns it) once both checks pass; nothing was written to it.
    static func connect(_ path: String, daemonUID: DaemonUID) throws(KeyVaultClientError) -> Int32 {
        guard let resolved = realPath(path) else { throw .unreachable(socket: path, reason: reason(errno)) }
        var socketInfo = stat()
        guard lstat(resolved, &socketInfo) == 0 else { throw .unreachable(socket: path, reason: reason(errno)) }
        guard socketInfo.st_mode & S_IFMT == S_IFSOCK else { throw .unreachable(socket: path, reason: "not a socket") }

        let own = geteuid(), owner = socketInfo.st_uid
        let expected: UInt32
        switch try daemonUID.resolved() {
        case .own: expected = own
        case .uid(let uid): expected = uid
        case .ownOrSocketOwner:
            // Another uid's socket only where nothing on the way to it was chosen by someone else:
            // the path as given has no link (a link in another user's folder could point anywhere),
            // and no folder above the socket is writable by others.
            let unlinked = linkFree(path)
            expected = owner != own && unlinked && placedByOwnerOrRoot(resolved, owner: owner) ? owner : own
        case .configured:
            preconditionFailure("resolved above")
        }
        guard owner == expected else { throw .wrongPeer(socket: path, expected: expected, actual: owner) }
        try folders(above: resolved, trusted: expected, socket: path)

        do {
            return try UnixSocket.connect(resolved, expectedUID: expected, timeoutSeconds: connectTimeoutSeconds)
        } catch {
            switch error {
            case .wrongPeer(_, let expected, let actual): throw .wrongPeer(socket: path, expected: expected, actual: actual)
            case .cannotConnect(_, let code): throw .unreachable(socket: path, reason: reason(code))
            case .tooLong: throw .unreachable(socket: path, reason: error.description)
            }
        }
    }

    /// The socket's folder belongs to `trusted` or root and no one else may write it; each folder
    /// above belongs to `trusted` or root, and is not writable by others unless sticky.
    private static func folders(above resolved: String, trusted: UInt32, socket: String) throws(KeyVaultClientError) {
        for (index, folder) in ancestors(of: resolved).enumerated() {
            var info = stat()
            guard lstat(folder, &info) == 0 else { throw .unreachable(socket: socket, reason: reason(errno)) }
            guard info.st_uid == trusted || info.st_uid == 0 else {
                throw .untrustedPath(socket: socket, reason: "the folder \(folder) belongs to uid \(info.st_uid)")
            }
            let writableByOthers = info.st_mode & (S_IWGRP | S_IWOTH) != 0
            let sticky = info.st_mode & S_ISVTX != 0
            guard !writableByOthers || (sticky && index > 0) else {
                throw .untrustedPath(socket: socket,
                                     reason: "the folder \(folder) can be written by others (mode \(String(info.st_mode & 0o7777, radix: 8)))")
            }
        }
    }

    /// Whether no part of `path`, as given, is a symbolic link.
    private static func linkFree(_ path: String) -> Bool {
        var current = ""
        for part in path.split(separator: "/", omittingEmptySubsequences: true) {
            current += "/" + part
            var info = stat()
            guard lstat(current, &info) == 0, info.st_mode & S_IFMT != S_IFLNK else { return false }
        }
        return path.hasPrefix("/")
    }

    /// Whether only `owner` or root could have made the socket: every folder
    /// above it belongs to one of them and none is writable by others at all.
    /// (A sticky `/tmp` lets anyone make a folder of their own there.)
    private static func placedByOwnerOrRoot(_ resolved: String, owner: UInt32) -> Bool {
        ancestors(of: resolved).allSatisfy { folder in
            var info = stat()
            return lstat(folder, &info) == 0 && (info.st_uid == owner || info.st_uid == 0) && info.st_mode & (S_IWGRP | S_IWOTH) == 0
        }
    }

    /// Why a socket could not be reached, in a person's words (the usual cases) or the system's.
    static func reason(_ code: Int32) -> String {
        switch code {
        case ENOENT, ENOTDIR: return "there is no socket at that path"
        case ECONNREFUSED: return "nothing listens on that socket: the daemon stopped, or left it behind"
        case EAGAIN, EINPROGRESS: return "the daemon did not take the connection within \(connectTimeoutSeconds) s (it is stopped, or its queue is full)"
        case EACCES, EPERM: return "this user may not open that socket or a folder above it"
        default: return String(cString: strerror(code))
        }
    }

    /// `/a/b/c.sock` → `/a/b`, `/a`, `/`.
    private static func ancestors(of path: String) -> [String] {
        var out: [String] = []
        var current = path
        while let slash = current.lastIndex(of: "/") {
            current = slash == current.startIndex ? "/" : String(current[..<slash])
            out.append(current)
            if current == "/" { break }
        }
        return out
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
