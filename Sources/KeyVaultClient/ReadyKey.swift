/// Waiting for a key as a sync engine should: the part of every app this
/// library exists to get right once.
extension KeyVaultClient {
    /// The key, once this device can read it, however long that takes:
    ///
    /// - `pending` (approval, delivery or the relay): a held read, woken the
    ///   moment the key lands, asked again each `heldFor` (30 s by default; less
    ///   if the daemon's policy allows shorter holds: a hold it refuses as
    ///   `invalid` is asked again at half the length, down to none at all);
    /// - `locked`: asked again, from every 50 ms up to once a second, until
    ///   someone unlocks the account (the daemon cannot wake a read for a
    ///   passphrase it does not have);
    /// - `throttled`, or a daemon that is restarting: after the pause it names.
    ///
    /// Throws the refusals that waiting does not cure (`unknown`, `revoked`,
    /// `destroyed`, `forbidden`, `damaged`, `invalid`), a wrong peer, or
    /// `CancellationError` when the task is cancelled.
    public func readyKey(_ account: String, _ selector: KeySelector = .current, heldFor: Duration = .seconds(30)) async throws -> AccountKey {
        var pause = Duration.milliseconds(50)
        // The daemon's limit (`max_wait_seconds`) is not told: a longer hold is `invalid`, and halved until it fits.
        var hold = Swift.max(heldFor, .zero)
        while true {
            try Task.checkCancellation()
            let answer: DaemonAnswer<AccountKey>
            let asked = ContinuousClock.now
            do {
                answer = try await key(account, selector, wait: hold)
            } catch KeyVaultClientError.unreachable {
                try await Task.sleep(for: pause)
                pause = min(pause * 2, .seconds(1))
                continue
            }
            switch answer {
            case .ready(let key):
                return key
            case .pending(let pending):
                // A held read returns when the key lands or the hold ends; one answered at once
                // (an older daemon, a hold refused) is asked again after the pause it names.
                pause = .milliseconds(50)
                if hold == .zero || ContinuousClock.now - asked < hold / 2 {
                    try await Task.sleep(for: Swift.min(Swift.max(pending.retryAfter, .milliseconds(50)), .seconds(1)))
                }
            case .refused(let refusal) where refusal.state == .locked:
                try await Task.sleep(for: pause)
                pause = min(pause * 2, .seconds(1))
            case .refused(let refusal) where refusal.state == .throttled || (refusal.state == .error && refusal.retryAfter != nil):
                try await Task.sleep(for: Swift.max(refusal.retryAfter ?? .seconds(1), .milliseconds(50)))
            case .refused(let refusal) where refusal.state == .invalid && hold > .zero:
                // Perhaps only the hold is too long for this daemon; a read that is invalid without one is thrown then.
                hold = Self.wholeSeconds(hold) > 1 ? .seconds(Self.wholeSeconds(hold) / 2) : .zero
            case .refused(let refusal):
                throw refusal
            }
        }
    }
}
