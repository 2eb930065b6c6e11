import Foundation
import Logging
import Testing
import KeyVaultProtocol
import KeyVaultRelay
import KeyVaultRelayStore

/// The store's "unreachable" reason is the latest problem only, bounded in length
/// (issue 33, item 8): it once nested the reason before it at each deadline, to
/// 27 levels and 2,415 characters in 10 s.
@Suite("Relay store: the reason it is unreachable")
struct StoreProblemTests {
    @Test("deadline after deadline, the reason says one problem, not every one before it")
    func reasonDoesNotNest() async throws {
        // Nothing listens on port 1: the pool keeps trying, and each operation misses its deadline.
        let configuration = PostgresRelayConfiguration(host: "127.0.0.1", port: 1, user: "nobody", database: "nothing")
        var quiet = Logger(label: "store-problem-tests")
        quiet.logLevel = .critical
        let relay = try PostgresRelay(configuration: configuration, operationTimeout: .milliseconds(150), logger: quiet)
        var reasons: [String] = []
        for _ in 0..<12 {
            do {
                _ = try await relay.rows(account: try AccountID(validating: "someone"), after: .start, limit: 10)
                Issue.record("a store that is not there answered")
            } catch RelayError.unreachable(let why) {
                reasons.append(why)
            }
        }
        await relay.shutdown()
        let last = try #require(reasons.last)
        #expect(last.components(separatedBy: "no answer").count - 1 == 1, "nested: \(last)")
        #expect(reasons.allSatisfy { $0.count <= 2 * PostgresRelayState.maxProblem }, "\(reasons.map(\.count))")
    }

    @Test("a long problem is cut to the bound; the latest replaces the one before")
    func problemIsBounded() {
        let state = PostgresRelayState()
        state.failed(String(repeating: "x", count: 10_000))
        #expect((state.lastProblem?.count ?? 0) <= PostgresRelayState.maxProblem)
        state.failed("connection refused")
        #expect(state.lastProblem == "connection refused")
        state.timedOut()
        #expect(state.lastProblem == "connection refused")
    }
}
