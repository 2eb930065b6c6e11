import Synchronization
import Testing
@testable import KeyVaultEngine
import KeyVaultAccount

/// Argon2id's thread (`OwnThread`): a thread that cannot be made is an error at once, and the work
/// is never run; one that can runs the work and answers it.
@Suite("A thread of its own")
struct OwnThreadTests {
    @Test("a thread that cannot be made answers an error at once; one that can answers the work's result")
    func threadFailureIsAnError() async throws {
        #expect(try await OwnThread.run { 6 * 7 } == 42)
        let ran = Mutex(false)
        do {
            // A stack no system gives: pthread_create refuses it, as it would past a thread limit.
            _ = try await OwnThread.run(stackBytes: Int.max / 2) { ran.withLock { $0 = true } }
            Issue.record("a thread with an impossible stack was made")
        } catch let refusal as Refusal {
            #expect(refusal.state == .error)
            #expect(refusal.message.contains("no thread could be started"))
        }
        #expect(!ran.withLock { $0 }, "the work ran although no thread was made")
    }
}
