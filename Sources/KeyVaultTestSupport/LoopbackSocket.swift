#if canImport(Glibc)
import Glibc
#endif

/// A blocking TCP connection to 127.0.0.1, for the tests' and the bench's raw
/// clients of a relay service (bytes no HTTP client library would send, or
/// thousands of held connections).
package enum LoopbackSocket {
    /// `from`: the loopback address to connect from (any of 127.0.0.0/8), so that
    /// thousands of connections can come from more than one client address.
    package static func connect(port: Int, from source: String? = nil) -> Result<Int32, SocketError> {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return .failure(SocketError(call: "socket()", errno: errno)) }
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else {
                let failure = SocketError(call: "bind(\(source))", errno: errno)
                close(fd)
                return .failure(failure)
            }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard rc == 0 else {
            let failure = SocketError(call: "connect(127.0.0.1:\(port))", errno: errno)
            close(fd)
            return .failure(failure)
        }
        return .success(fd)
    }

    package struct SocketError: Error, CustomStringConvertible {
        package let call: String
        package let errno: Int32
        package var description: String { "\(call): errno \(errno)" }
    }
}
