import KeyVaultRelay
import KeyVaultVault
import Foundation
import Logging
import KeyVaultProtocol

/// Whether the relay still holds what this device knows it held. A relay file
/// deleted and made anew, or a store restored from an old backup, is younger
/// than this device's view of it: accepted silently, a new device would be
/// told the account does not exist and another daemon could found it again.
/// So each time the relay is opened this device checks, says what is missing
/// (`status`: relay `behind`), and publishes its own copy of the log again.
package struct RelayAudit: Sendable {
    package let service: KeyVaultService
    let vault: Vault
    let logger: Logger
    let now: @Sendable () -> Date
    package let owners: AccountOwners
    let relay: (any Relay)?

    init(service: KeyVaultService) {
        self.service = service
        vault = service.vault
        logger = service.logger
        now = service.now
        owners = service.owners
        relay = service.relay
    }

    /// After the relay was opened (at start, or again after a failure).
    func auditRelay() async {
        guard let relay else { return }
        service.relayAudits.add(1, ordering: .sequentiallyConsistent)
        do {
            // A store whose last cursor is below one this device read is not that store: read it from its start.
            var ahead: [AccountID]
            if let last = try await relay.lastCursor() {
                ahead = owners.held.filter { ($0.read { $0.relayCursor } ?? .start) > last }.map(\.id)
            } else {
                ahead = []
            }
            // A relay with no store-wide order says per account that its store went back.
            let held = Set(owners.heldIDs)
            ahead += relay.takeAccountsGoneBack().filter { held.contains($0) && !ahead.contains($0) }
            for id in ahead.sorted() {
                await owners.run(id) {
                    do { try await restartReading(id) } catch {
                        logger.error("could not restart reading the relay", metadata: ["account": "\(id)", "problem": "\(error)"])
                    }
                }
            }
            for id in service.propagation.accountIDs { try await checkRelayHolds(id) }
            service.publishing.noteRelay(nil)
        } catch {
            service.publishing.noteRelay(error)
        }
    }

    /// Publishes this device's copy of the account's log entries that the
    /// relay lacks although this device knows it held them.
    ///
    /// The relay is read outside the account's line, and no job waits for a publish turn here: a
    /// relay that is slow, or a publish held on it (a held file at a start), holds back no job of the
    /// account. What is checked is what this device knew the relay held before the read began: its
    /// log confirmed, and a write outside the line the relay took that no job recorded yet.
    private func checkRelayHolds(_ id: AccountID) async throws {
        guard let relay, let owner = owners.existing(id) else { return }
        // `written` before the count: a job recording it clears it only after the count is published.
        let written = owner.written.withLock { $0?.through ?? 0 }
        // A device still joining does not vouch for the log it was shown: it republishes nothing.
        guard let confirmed = owner.read({ $0.enrollment.trustsItsCircle ? $0.logConfirmed : 0 }) else { return }
        let known = max(confirmed, written)
        guard known > 0 else { return }
        let held = Set(try await relay.all(.log, account: id).compactMap(\.record.logSeq))
        try await owners.run(id) {
            guard let state = owners.state(id), state.enrollment.trustsItsCircle else { return }
            let missing = (0..<min(known, state.circle.entries.count)).filter { !held.contains(LogSeq(index: $0)) }
            guard !missing.isEmpty else { return }
            logger.error("the relay lacks log entries this device knows it held; publishing this device's copy",
                         metadata: ["account": "\(id)", "missing": "\(missing)"])
            service.relayHealth.withLock { $0.behind[id] = RelayBehind(account: id.rawValue, missingEntries: missing, since: now(), republished: false) }
            if state.relayCursor > .start { try await restartReading(id) }
            var published = true
            // In order, one at a time: an entry another device published again meanwhile is left as it is.
            for seq in missing {
                do {
                    try await relay.publish(.log(state.circle.entries[seq]))
                } catch RelayError.logSeqTaken {
                    // Published again by another device meanwhile, byte for byte, or taken by something else.
                    let now = try await relay.all(.log, account: id)
                    if !now.contains(where: { $0.record.logSeq == LogSeq(index: seq) && $0.record.body == state.circle.entries[seq].encoded }) {
                        published = false
                    }
                }
            }
            service.relayHealth.withLock { $0.behind[id]?.republished = published }
        }
    }

    /// Reads the account from the relay's start again, the records kept for it renumbered below.
    func restartReading(_ id: AccountID) async throws {
        let renumbered = try await vault.restartRelayReading(account: id)
        // Every kept share is a kept record of the vault's, so each has its new number.
        service.update(id, .readingRestarted(renumbered: renumbered))
    }
}
