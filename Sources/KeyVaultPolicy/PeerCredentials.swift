/// Who is on the other end of a socket connection, from `SO_PEERCRED`: the
/// kernel's word, not the client's.
package struct PeerCredentials: Sendable, Equatable, CustomStringConvertible {
    package var uid: UInt32
    package var gid: UInt32
    package var pid: Int32

    package init(uid: UInt32, gid: UInt32, pid: Int32) {
        self.uid = uid
        self.gid = gid
        self.pid = pid
    }

    package var description: String { "uid \(uid) gid \(gid) pid \(pid)" }
}
