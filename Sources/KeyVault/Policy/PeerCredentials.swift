import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultStore
/// Who is on the other end of a socket connection, from `SO_PEERCRED`: the
/// kernel's word, not the client's.
public struct PeerCredentials: Sendable, Equatable, CustomStringConvertible {
    public var uid: UInt32
    public var gid: UInt32
    public var pid: Int32

    public init(uid: UInt32, gid: UInt32, pid: Int32) {
        self.uid = uid
        self.gid = gid
        self.pid = pid
    }

    public var description: String { "uid \(uid) gid \(gid) pid \(pid)" }
}
