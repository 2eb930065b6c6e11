import Glibc
import KeyVaultAccount

/// Blocking work on a thread of its own (Argon2id, `KDFRunner`). A thread that cannot be made
/// (a process's or a cgroup's thread limit, memory) is an error for the caller at once, never a
/// wait that does not end: `pthread_create`'s answer is checked, which Foundation's `Thread` does not.
enum OwnThread {
    private final class Work {
        let run: () -> Void
        init(_ run: @escaping () -> Void) { self.run = run }
    }

    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let work = Unmanaged.passRetained(Work { continuation.resume(with: Result { try body() }) })
            var thread = pthread_t()
            let status = pthread_create(&thread, nil, { context in
                Unmanaged<Work>.fromOpaque(context!).takeRetainedValue().run()
                return nil
            }, work.toOpaque())
            if status == 0 {
                pthread_detach(thread)
            } else {
                work.release()
                continuation.resume(throwing: Refusal(.error, "no thread could be started for the passphrase's key derivation (\(String(cString: strerror(status)))); try again"))
            }
        }
    }
}
