import Synchronization

/// One account's mutations run one at a time (unlock, lock, passphrase change,
/// and later rotation), in arrival order. Reads never wait here.
actor AsyncGate {
    private var busy = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func acquire() async {
        guard busy else {
            busy = true
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    func release() {
        if waiters.isEmpty {
            busy = false
        } else {
            // Hand the gate straight to the next waiter: it stays busy.
            waiters.removeFirst().resume()
        }
    }
}

/// A gate per account, made on first use.
final class AccountGates: Sendable {
    private let gates = Mutex<[AccountID: AsyncGate]>([:])

    func serialize<T: Sendable>(_ account: AccountID, _ body: () async throws -> T) async throws -> T {
        let gate = gates.withLock { gates in
            if let gate = gates[account] { return gate }
            let gate = AsyncGate()
            gates[account] = gate
            return gate
        }
        await gate.acquire()
        do {
            let result = try await body()
            await gate.release()
            return result
        } catch {
            await gate.release()
            throw error
        }
    }
}

extension AsyncGate {
    /// Runs `body` holding the gate.
    nonisolated func holding<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        await acquire()
        do {
            let result = try await body()
            await release()
            return result
        } catch {
            await release()
            throw error
        }
    }

    nonisolated func holding<T: Sendable>(_ body: () async -> T) async -> T {
        await acquire()
        let result = await body()
        await release()
        return result
    }
}
