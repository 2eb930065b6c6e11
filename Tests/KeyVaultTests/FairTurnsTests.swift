import Foundation
import Synchronization
import Testing
import KeyVault
import KeyVaultEngine
import KeyVaultPolicy

/// KDF runs are taken in turn between callers (issue 32, item 5): one caller's
/// many runs delay another's by at most the runs already under way.
@Suite("KDF turns: fair between callers")
struct FairTurnsTests {
    @Test("24 runs queued by one caller, then one by another: the other's starts after at most two of the first's (2 slots)")
    func oneCallerCannotStarveAnother() async throws {
        let turns = FairTurns(slots: 2)
        let order = Log()
        // Two runs hold both slots; 24 more from caller 1 queue behind them.
        await turns.enter(1)
        await turns.enter(1)
        var tasks: [Task<Void, Never>] = []
        for i in 0..<24 {
            tasks.append(Task {
                await turns.enter(1)
                order.append("a\(i)")
                try? await Task.sleep(for: .milliseconds(2))
                turns.leave()
            })
        }
        try await Task.sleep(for: .milliseconds(100))
        let victim = Task {
            await turns.enter(2)
            order.append("victim")
            turns.leave()
        }
        try await Task.sleep(for: .milliseconds(100))
        turns.leave()
        turns.leave()
        await victim.value
        for task in tasks { await task.value }
        let seen = order.entries
        let position = try #require(seen.firstIndex(of: "victim"))
        #expect(position <= 2, "the other caller's run came \(position + 1)th: \(seen)")
        #expect(seen.count == 25)
    }
}

/// What ran, in order.
private final class Log: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var entries: [String] { lines.withLock { $0 } }
}
