#if canImport(Glibc)
import Glibc
#endif

/// A stream connection to a Unix socket, and who serves it.
///
/// A socket's path says nothing about who listens on it: another user who
/// could write its folder may have put their own there. The kernel's word on
/// the peer (`SO_PEERCRED`) is read before anything is sent, so a passphrase
/// never goes to a process of another uid.
package enum UnixSocket {
    package enum Failure: Error, CustomStringConvertible, Equatable {
        /// `connect` failed with this `errno`.
        case cannotConnect(path: String, errno: Int32)
        case tooLong(path: String)
        /// The socket is served by a process of another uid than the one expected.
        case wrongPeer(path: String, expected: UInt32, actual: UInt32)

        package var description: String {
            switch self {
            case .cannotConnect(let path, let code):
                return "cannot connect to \(path): \(String(cString: strerror(code)))"
            case .tooLong(let path):
                return "the socket path \(path) is longer than a Unix socket allows (107 bytes)"
            case .wrongPeer(let path, let expected, let actual):
                return "refusing to talk to \(path): it is served by uid \(actual), not by uid \(expected) as expected; "
                    + "another user may have taken the daemon's place (nothing was sent). If the daemon runs as uid \(actual) "
                    + "on purpose, say so with --daemon-uid \(actual) or $KEYVAULT_DAEMON_UID"
            }
        }
    }

    /// This process's effective uid: the peer a client expects unless told otherwise.
    package static var ownUID: UInt32 { geteuid() }

    /// The peer of a connected Unix socket, as the kernel reports it.
    package struct Peer: Sendable, Equatable {
        package var pid: Int32
        package var uid: UInt32
        package var gid: UInt32
    }

    /// A connected descriptor (the caller closes it) whose peer is `expectedUID`
    /// (nil: any peer). Nothing is written to it here.
    /// `timeoutSeconds` bounds the wait on a daemon whose queue is full (`SO_SNDTIMEO`,
    /// which a Unix socket's connect honours); without it, that wait has no end.
    package static func connect(_ path: String, expectedUID: UInt32?, timeoutSeconds: Int? = nil) throws(Failure) -> Int32 {
        guard path.utf8.count < 108 else { throw .tooLong(path: path) }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .cannotConnect(path: path, errno: errno) }
        if let timeoutSeconds {
            var limit = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
            _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (i, byte) in path.utf8.enumerated() { buffer[i] = byte }
        }
        let rc = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard rc == 0 else {
            let code = errno
            close(fd)
            throw .cannotConnect(path: path, errno: code)
        }
        if let expectedUID {
            guard let peer = peer(of: fd) else {
                close(fd)
                throw .cannotConnect(path: path, errno: EPROTO)
            }
            guard peer.uid == expectedUID else {
                close(fd)
                throw .wrongPeer(path: path, expected: expectedUID, actual: peer.uid)
            }
        }
        return fd
    }

    /// `SO_PEERCRED` of a connected socket; nil if the kernel will not say.
    package static func peer(of fd: Int32) -> Peer? {
        // `struct ucred`, which Glibc shows Swift only under _GNU_SOURCE: the same three fields.
        var credentials = Peer(pid: 0, uid: 0, gid: 0)
        var length = socklen_t(MemoryLayout<Peer>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0, length == MemoryLayout<Peer>.size else { return nil }
        return credentials
    }
}
