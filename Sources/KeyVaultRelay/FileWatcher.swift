import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
import KeyVaultCrypto
import KeyVaultProtocol
#endif

/// inotify on a folder, for the files whose names start with a prefix (the
/// relay file and its `-wal`/`-shm`). One thread blocks in `read`; each batch
/// of events wakes every subscriber once.
package final class FileWatcher: Sendable {
    private let descriptor: Int32
    private let subscribers = Mutex<[UUID: AsyncStream<Void>.Continuation]>([:])

    package init(directory: String, namePrefix: String) throws {
        descriptor = inotify_init1(Int32(IN_CLOEXEC))
        guard descriptor >= 0 else { throw RelayError.unreachable("inotify_init1 failed: \(String(cString: strerror(errno)))") }
        let mask = UInt32(IN_MODIFY | IN_CLOSE_WRITE | IN_CREATE | IN_MOVED_TO)
        guard inotify_add_watch(descriptor, directory, mask) >= 0 else {
            close(descriptor)
            throw RelayError.unreachable("cannot watch \(directory): \(String(cString: strerror(errno)))")
        }
        let fd = descriptor
        let prefix = Array(namePrefix.utf8)
        Thread.detachNewThread { [weak self] in
            var buffer = [UInt8](repeating: 0, count: 16 * 1024)
            while true {
                let count = read(fd, &buffer, buffer.count)
                guard count > 0 else { return }  // closed: the watcher is gone
                guard let self else { return }
                if Self.mentions(prefix, in: buffer[0..<count]) { self.ring() }
            }
        }
    }

    deinit { close(descriptor) }

    /// True if any event in the batch names a file starting with `prefix`.
    private static func mentions(_ prefix: [UInt8], in batch: ArraySlice<UInt8>) -> Bool {
        var offset = batch.startIndex
        let header = MemoryLayout<inotify_event>.size
        while offset + header <= batch.endIndex {
            let nameLength = batch[offset + 12..<offset + 16].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
            let nameStart = offset + header
            let name = batch[nameStart..<min(nameStart + Int(nameLength), batch.endIndex)]
            if name.starts(with: prefix) { return true }
            offset = nameStart + Int(nameLength)
        }
        return false
    }

    /// Yields outside the lock: a yield can wait on a task's status lock, which a
    /// cancelling task holds while its stream's `onTermination` waits for this lock.
    private func ring() {
        let continuations = subscribers.withLock { Array($0.values) }
        for continuation in continuations { continuation.yield() }
    }

    package func events() -> AsyncStream<Void> {
        let id = UUID()
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        continuation.onTermination = { [weak self] _ in _ = self?.subscribers.withLock { $0.removeValue(forKey: id) } }
        subscribers.withLock { $0[id] = continuation }
        return stream
    }
}
