import Foundation
#if canImport(Glibc)
import Glibc
import KeyVaultEngine
import KeyVaultPolicy
#endif

/// `sd_notify` without libsystemd: one datagram to `$NOTIFY_SOCKET`.
package enum SystemdNotifier {
    package static func notify(_ message: String) {
        guard let path = ProcessInfo.processInfo.environment["NOTIFY_SOCKET"], !path.isEmpty, path.utf8.count < 108 else { return }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(path.utf8)
        // A leading '@' names the abstract namespace.
        if bytes.first == UInt8(ascii: "@") { bytes[0] = 0 }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (i, byte) in bytes.enumerated() { buffer[i] = byte }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
        let payload = Array(message.utf8)
        _ = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, payload, payload.count, 0, $0, length) }
        }
    }
}
