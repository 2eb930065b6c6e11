#if canImport(Glibc)
import Glibc
#endif
import KeyVaultAccount

/// One daemon per data directory: an exclusive `flock` on a file beside the vault
/// (`vault.sqlite-owner`), held for the life of the process (the kernel drops it when
/// the process ends, however it ends). Two daemons on one vault would each take its
/// accounts for their own, and publish under one device's identity.
package final class DataDirectoryOwner: Sendable {
    package static let fileName = Vault.fileName + "-owner"

    private let descriptor: Int32

    /// Takes the directory (made and checked by `DataDirectory.prepare` first), or says which
    /// process holds it.
    package init(directory: String) throws {
        try DataDirectory.prepare(directory)
        let path = directory + "/" + Self.fileName
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else {
            throw VaultError.dataDirectory("cannot open \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let busy = errno == EWOULDBLOCK
            let reason = String(cString: strerror(errno))
            let holder = Self.holder(descriptor)
            close(descriptor)
            guard busy else { throw VaultError.dataDirectory("cannot lock \(path): \(reason)") }
            throw VaultError.dataDirectory("another keyvaultd\(holder.map { " (pid \($0))" } ?? "") is using \(directory); "
                                           + "stop it first or choose another --data-dir")
        }
        // The holder's pid, for the next one's message; the lock, not the pid, says who owns it.
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(descriptor, 0)
        _ = pid.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        self.descriptor = descriptor
    }

    private static func holder(_ descriptor: Int32) -> Int32? {
        var bytes = [UInt8](repeating: 0, count: 16)
        let count = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        return Int32(String(decoding: bytes[..<count].prefix { (48...57).contains($0) }, as: UTF8.self))
    }

    deinit { close(descriptor) }
}
