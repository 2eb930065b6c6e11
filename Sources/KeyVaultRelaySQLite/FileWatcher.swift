import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
import KeyVaultProtocol
#endif

/// inotify on a folder, for the files whose names start with a prefix (the
/// relay file and its `-wal`/`-shm`). One thread waits in `poll` on the inotify
/// descriptor and on a pipe; each batch of events wakes every subscriber once.
///
/// The thread owns both descriptors and closes them as it ends. The watcher's
/// `deinit` ends it through the pipe: closing a descriptor a thread is blocked
/// reading does not wake it on Linux (the thread, its buffer and the inotify
/// instance would stay for the life of the process, one per relay opened).
package final class FileWatcher: Sendable {
    /// The pipe's write end: a byte written (or the end closed) stops the thread.
    private let stop: Int32
    private let subscribers = Mutex<[UUID: AsyncStream<Void>.Continuation]>([:])
    /// Set by the thread as it ends, its descriptors closed: what a test of this watcher, and of
    /// no other in the process, waits for once the watcher is gone.
    package let threadEnded = WatcherThreadEnd()

    package final class WatcherThreadEnd: Sendable {
        private let ended = Atomic<Bool>(false)
        package var isEnded: Bool { ended.load(ordering: .acquiring) }
        fileprivate func end() { ended.store(true, ordering: .releasing) }
    }

    package init(directory: String, namePrefix: String) throws {
        let descriptor = inotify_init1(Int32(IN_CLOEXEC))
        guard descriptor >= 0 else { throw RelayError.unreachable("inotify_init1 failed: \(String(cString: strerror(errno)))") }
        let mask = UInt32(IN_MODIFY | IN_CLOSE_WRITE | IN_CREATE | IN_MOVED_TO)
        guard inotify_add_watch(descriptor, directory, mask) >= 0 else {
            close(descriptor)
            throw RelayError.unreachable("cannot watch \(directory): \(String(cString: strerror(errno)))")
        }
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else {
            close(descriptor)
            throw RelayError.unreachable("pipe failed: \(String(cString: strerror(errno)))")
        }
        for end in pipeEnds { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        stop = pipeEnds[1]
        let stopped = pipeEnds[0]
        let prefix = Array(namePrefix.utf8)
        let threadEnded = threadEnded
        Thread.detachNewThread { [weak self] in
            defer {
                close(descriptor)
                close(stopped)
                threadEnded.end()
            }
            var buffer = [UInt8](repeating: 0, count: 16 * 1024)
            var watched = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: stopped, events: Int16(POLLIN), revents: 0)]
            while true {
                if poll(&watched, 2, -1) < 0 {
                    if errno == EINTR { continue }
                    return
                }
                // The watcher is gone (a byte, or its end closed): stop.
                if watched[1].revents != 0 { return }
                guard watched[0].revents & Int16(POLLIN) != 0 else { return }
                let count = read(descriptor, &buffer, buffer.count)
                guard count > 0 else { return }
                guard let self else { return }
                if Self.mentions(prefix, in: buffer[0..<count]) { self.ring() }
            }
        }
    }

    deinit { close(stop) }

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
