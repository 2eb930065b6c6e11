import Foundation
import Testing
import KeyVaultRelay
import KeyVaultRelaySQLite

/// The embedded relay's file watcher (issue 34, "edges"): the thread that waits for
/// inotify events ends, and its descriptors close, when the watcher goes. Before, its
/// thread stayed blocked in `read` on a descriptor `deinit` had closed (Linux does not
/// wake it), one thread and one inotify instance kept per relay ever opened, and the
/// descriptor's number free for the next `open` while a thread still read it.
@Suite("File watcher", .serialized)
struct FileWatcherTests {
    @Test("50 watchers made and dropped: the process's threads and descriptors come back to where they were")
    func droppedWatchersLeaveNothing() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kvwatch-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // The concurrency pool's threads are up before counting (they stay).
        await withTaskGroup(of: Void.self) { group in for _ in 0..<4 { group.addTask { try? await Task.sleep(for: .milliseconds(5)) } } }
        let threadsBefore = Self.count("/proc/self/task"), descriptorsBefore = Self.count("/proc/self/fd")
        do {
            var watchers: [FileWatcher] = []
            for _ in 0..<50 { watchers.append(try FileWatcher(directory: folder, namePrefix: "relay")) }
            // They watch: a file written rings each one's subscriber.
            let events = watchers[0].events()
            _ = FileManager.default.createFile(atPath: folder + "/relay.sqlite", contents: Data([1]))
            var iterator = events.makeAsyncIterator()
            _ = await iterator.next()
            #expect(Self.count("/proc/self/task") >= threadsBefore + 50)
        }
        // Every watcher is gone: their threads end and close what they held.
        for _ in 0..<200 where Self.count("/proc/self/task") > threadsBefore || Self.count("/proc/self/fd") > descriptorsBefore {
            try await Task.sleep(for: .milliseconds(25))
        }
        #expect(Self.count("/proc/self/task") <= threadsBefore, "threads: \(threadsBefore) before, \(Self.count("/proc/self/task")) after")
        #expect(Self.count("/proc/self/fd") <= descriptorsBefore, "descriptors: \(descriptorsBefore) before, \(Self.count("/proc/self/fd")) after")
    }

    static func count(_ folder: String) -> Int { (try? FileManager.default.contentsOfDirectory(atPath: folder).count) ?? 0 }
}
