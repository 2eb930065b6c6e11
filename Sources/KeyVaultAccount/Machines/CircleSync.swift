import Foundation
package import KeyVaultCrypto
package import KeyVaultProtocol

/// Circle sync, decided without I/O: entries read from the relay are verified
/// against this device's log; one that takes the number of an entry this
/// device appended but the relay does not hold yet rebases this device's
/// entries after it (signed anew). The owner persists the outcome, vault
/// first, then publishes it and performs the rest.
package enum CircleSync {
    package struct Outcome: Sendable {
        /// The log after the entries.
        package var circle: CircleState
        /// How many leading entries the relay is known to hold.
        package var confirmed: Int
        /// Entries this log did not have.
        package var accepted: [LogEntry]
        /// This device's own entries were rebased: the stored log is rewritten from this number.
        package var rewrittenFrom: LogSeq?
        /// This device's queued entries that another device's had made moot (dropped in the rebase).
        package var dropped: [LogEntry.Body]
        /// What waiting reads and event streams hear.
        package var events: [AccountEvent]
        /// A destroy entry was accepted: every key is to be shredded.
        package var destroyed: Bool
        /// This device is trusted now and was not before.
        package var joined: Bool

        /// Nothing to persist.
        package var isEmpty: Bool { accepted.isEmpty && rewrittenFrom == nil }
    }

    /// Applies `entries` to `circle`. `confirmed` leading entries are on the
    /// relay; the rest are this device's (`me`), re-signed with `signer` if a
    /// rebase needs them (nil: locked, and a rebase throws until the unlock).
    /// Throws the first entry's refusal; then nothing is adopted.
    package static func adopt(_ entries: [LogEntry], into circle: CircleState, confirmed: Int, me: DeviceID,
                             signer: SigningKey?) throws(ProtocolError) -> Outcome {
        let wasMember = circle.isTrusted(me)
        var out = Outcome(circle: circle, confirmed: confirmed, accepted: [], rewrittenFrom: nil, dropped: [], events: [], destroyed: false, joined: false)
        for entry in entries {
            if entry.seq < out.circle.nextSeq, out.circle.entries[entry.seq.index].hash != entry.hash, entry.seq.index >= out.confirmed {
                // A genesis is never rebased: another device founded the account first, and this
                // device's own founding is abandoned (the owner drops it), never joined to theirs.
                guard entry.seq > .genesis else {
                    throw .invalid("another device founded this account first; this device's founding of it is abandoned")
                }
                guard let signer else {
                    throw .invalid("entry \(entry.seq) takes the place of one this device queued; it is rebased at the next unlock")
                }
                let (rebased, dropped) = try rebase(out.circle, after: entry, me: me, signer: signer)
                out.circle = rebased
                out.dropped += dropped
                out.rewrittenFrom = min(out.rewrittenFrom ?? entry.seq, entry.seq)
                out.accepted.append(entry)
            } else {
                let before = out.circle.nextSeq
                try out.circle.apply(entry)
                if out.circle.nextSeq > before { out.accepted.append(entry) }
            }
            // The relay holds this entry, so every entry before it too.
            out.confirmed = max(out.confirmed, entry.seq.index + 1)
        }
        for entry in out.accepted {
            switch entry.body {
            case .approve(let device, _): out.events.append(.deviceEnrolled(device.deviceID))
            case .announce(let generation, let keyID, _) where entry.signer != me: out.events.append(.rotated(generation, keyID))
            case .revoke(let deviceID): out.events.append(.deviceRevoked(deviceID))
            case .destroy: out.destroyed = true
            case .genesis, .announce, .promote, .recovery: break
            }
        }
        out.joined = !wasMember && out.circle.isTrusted(me)
        return out
    }

    /// The circle up to `entry`'s number, `entry`, then this device's entries
    /// from there again, signed anew. One that no longer applies (the device is
    /// already revoked, the key already promoted) is dropped: it is done already.
    package static func rebase(_ circle: CircleState, after entry: LogEntry, me: DeviceID, signer: SigningKey) throws(ProtocolError) -> (CircleState, [LogEntry.Body]) {
        var rebased = try circle.prefix(entry.seq.index)
        try rebased.apply(entry)
        var dropped: [LogEntry.Body] = []
        for mine in circle.entries[entry.seq.index...] {
            let again = rebased.nextEntry(mine.body, signer: signer, signerID: me, at: Millis.date(mine.createdAt))
            do { try rebased.apply(again) } catch { dropped.append(mine.body) }
        }
        return (rebased, dropped)
    }
}
