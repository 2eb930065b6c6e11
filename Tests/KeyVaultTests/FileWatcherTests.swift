import Foundation
import Testing
import KeyVaultRelay
import KeyVaultRelaySQLite

/// The embedded relay's file watcher (issue 34, "edges"): the thread that waits for
/// inotify events ends, and its descriptors close, when the watcher goes. Before, its
/// thread stayed blocked in `read` on a descriptor `deinit` had closed (Linux does not
/// wake it), one thread and one inotify instance kept per relay ever opened, and the
/// descriptor's number free for the next `open` while a thread still read it.
@Suite("File watcher")
struct FileWatcherTests {
    /// Each watcher's own thread is followed (`threadEnded`), not the process's thread and descriptor
    /// counts, which the other tests running beside this one move (their relays have watchers too).
    @Test("50 watchers made and dropped: each one's thread ends, its descriptors closed")
    func droppedWatchersLeaveNothing() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kvwatch-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var ends: [FileWatcher.WatcherThreadEnd] = []
        do {
            var watchers: [FileWatcher] = []
            for _ in 0..<50 { watchers.append(try FileWatcher(directory: folder, namePrefix: "relay")) }
            ends = watchers.map(\.threadEnded)
            // They watch: a file written rings each one's subscriber.
            let events = watchers[0].events()
            _ = FileManager.default.createFile(atPath: folder + "/relay.sqlite", contents: Data([1]))
            var iterator = events.makeAsyncIterator()
            _ = await iterator.next()
            #expect(ends.allSatisfy { !$0.isEnded }, "a watcher's thread ended while the watcher was held")
        }
        // Every watcher is gone: their threads end and close what they held.
        for _ in 0..<200 where !ends.allSatisfy(\.isEnded) { try await Task.sleep(for: .milliseconds(25)) }
        #expect(ends.filter { !$0.isEnded }.isEmpty, "\(ends.filter { !$0.isEnded }.count) of 50 watchers' threads still run after the watchers went")
    }
}
