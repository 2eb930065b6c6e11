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

    /// `stackBytes`: the thread's stack, if not the system's default (a test asks for one no system
    /// can give, to see the failure answered).
    static func run<T: Sendable>(stackBytes: Int? = nil, _ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let work = Unmanaged.passRetained(Work { continuation.resume(with: Result { try body() }) })
            var thread = pthread_t()
            var attributes = pthread_attr_t()
            pthread_attr_init(&attributes)
            defer { pthread_attr_destroy(&attributes) }
            var status = stackBytes.map { pthread_attr_setstacksize(&attributes, $0) } ?? 0
            if status == 0 {
                status = pthread_create(&thread, &attributes, { context in
                    Unmanaged<Work>.fromOpaque(context!).takeRetainedValue().run()
                    return nil
                }, work.toOpaque())
            }
            if status == 0 {
                pthread_detach(thread)
            } else {
                work.release()
                continuation.resume(throwing: Refusal(.error, "no thread could be started for the passphrase's key derivation (\(String(cString: strerror(status)))); try again"))
            }
        }
    }
}
