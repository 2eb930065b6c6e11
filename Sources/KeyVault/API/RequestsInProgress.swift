import Synchronization
import KeyVaultEngine
import KeyVaultPolicy

/// Requests a route is handling now, counted where they enter and leave the
/// contract middleware: what `GET /v1/server` shows so that a request whose
/// client went away can be seen to have ended, not only its connection.
final class RequestsInProgress: Sendable {
    private let count = Atomic<Int>(0)

    var current: Int { count.load(ordering: .relaxed) }

    func during<T>(_ operation: () async throws -> T) async rethrows -> T {
        count.add(1, ordering: .relaxed)
        defer { count.subtract(1, ordering: .relaxed) }
        return try await operation()
    }
}
