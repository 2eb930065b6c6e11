import Foundation
import KeyVaultCrypto
import KeyVaultProtocol

/// RELAY.md "Who may do what", as pure functions of the account's verified
/// circle, the signer's standing in it and the records: no I/O, no clock.
enum Authorization {
    /// Who the signer is within the account; nil: nobody the account knows.
    enum Standing: Equatable {
        case member(SigningPublicKey)
        case candidate(SigningPublicKey)
        /// Revoked by the log entry `through`: it reads the log up to that entry (how it
        /// learns it was revoked) and nothing else, and writes nothing. A candidacy it
        /// still holds does not count: a revoked device comes back only with new keys.
        case revoked(SigningPublicKey, through: LogSeq)
        /// Not known yet, but approved by the `approve` entry its batch opens with (signed by a
        /// trusted member, so it verifies whoever sends it): a device a recovery kit's member
        /// re-joined publishes its own approval. It may publish that batch only.
        case approvedInBatch(SigningPublicKey)

        var key: SigningPublicKey {
            switch self {
            case .member(let key), .candidate(let key), .revoked(let key, _), .approvedInBatch(let key): return key
            }
        }

        /// The key of the device an `approve` entry opening `records` approves, if that is
        /// `keyID` and the entry extends `circle`'s head as a trusted member signed it.
        static func approvedInBatch(_ keyID: DeviceID, records: [RelayRecord], circle: CircleState) -> Standing? {
            guard let first = records.first, first.kind == .log, let entry = try? LogEntry.decode(first.body),
                  case .approve(let device, _) = entry.body, device.deviceID == keyID, entry.seq == circle.nextSeq else { return nil }
            var after = circle
            guard (try? after.apply(entry)) != nil else { return nil }
            return .approvedInBatch(device.signing)
        }

        static func of(_ keyID: DeviceID, circle: CircleState, candidates: [Candidate]) -> Standing? {
            if let member = circle.members[keyID] {
                guard member.revoked else { return .member(member.keys.signing) }
                let revocation = circle.entries.last { entry in
                    if case .revoke(let deviceID) = entry.body { return deviceID == keyID }
                    return false
                }
                return .revoked(member.keys.signing, through: revocation?.seq ?? .genesis)
            }
            if let candidate = candidates.first(where: { $0.deviceID == keyID }) { return .candidate(candidate.signing) }
            return nil
        }
    }

    /// The records of a batch to store, in order, or the refusal of the whole
    /// batch. `ownRequests` are the signer's requests already stored (for a
    /// reveal). A log entry already stored with the same bytes is dropped:
    /// a repeated request stores it once.
    /// Answers the records to store, and the circle with the batch's entries applied (verified here:
    /// once they are stored, `VerifiedViews.adopt` takes it instead of verifying them again).
    static func publish(_ records: [RelayRecord], signer keyID: DeviceID, isCandidate: Bool, circle start: CircleState,
                        ownRequests: [FiledRequest]) throws(Refusal) -> (records: [RelayRecord], circle: CircleState) {
        var circle = start
        var requests = ownRequests
        var out: [RelayRecord] = []
        for (index, record) in records.enumerated() {
            // The running circle: a genesis earlier in the batch makes its device a member for the rest,
            // and so does an approval of the signer opening the batch (`Standing.approvedInBatch`).
            let isMember = circle.isTrusted(keyID)
            let approvesSigner = index == 0 && !isMember && !isCandidate && Self.approves(record, keyID)
            guard isMember || isCandidate || approvesSigner else { throw .forbidden }
            guard record.account == circle.account else { throw .invalid("a record for another account") }
            guard (record.kind == .share) == (record.recipient != nil) else { throw .invalid("recipient is for a share, and only a share") }
            guard (record.kind == .log) == (record.logSeq != nil) else { throw .invalid("logSeq is for a log entry, and only a log entry") }
            switch record.kind {
            case .log:
                let entry = try decoded { () throws(ProtocolError) in try LogEntry.decode(record.body) }
                guard entry.seq == record.logSeq, entry.account == circle.account else {
                    throw .invalid("logSeq or the account differs from the encoded entry's")
                }
                if entry.seq < circle.nextSeq {
                    guard circle.holds(entry) else { throw .logSeqTaken(entry.seq) }
                    continue
                }
                if entry.seq == 0 {
                    guard isCandidate, case .genesis(let device, _, _, _) = entry.body, device.deviceID == keyID else { throw .forbidden }
                } else {
                    guard isMember || approvesSigner else { throw .forbidden }
                }
                try decoded { () throws(ProtocolError) in try circle.apply(entry) }
            case .request:
                guard isCandidate, !isMember else { throw .forbidden }
                // Devices pair by version 2; a version 1 request would wait for an answer that never comes.
                guard SignedEnvelope.label(of: record.body) != Labels.enrollRequest else { throw .invalid(Self.retiredPairing) }
                let request = try decoded { () throws(ProtocolError) in try FiledRequest.decode(record.body) }
                guard request.account == circle.account else { throw .invalid("a request for another account") }
                guard request.deviceID == keyID else { throw .forbidden }
                requests.append(request)
            case .reveal:
                guard isCandidate, !isMember else { throw .forbidden }
                guard let hash = FiledRequest.requestHash(ofReveal: record.body) else { throw .invalid("a reveal that does not decode") }
                guard let request = requests.first(where: { $0.hash == hash }) else { throw .forbidden }
                try decoded { () throws(ProtocolError) in try request.checkReveal(record.body) }
            case .challenge:
                guard isMember else { throw .forbidden }
                try decoded { () throws(ProtocolError) in try FiledRequest.checkChallenge(record.body, circle: circle) }
            case .share:
                guard isMember else { throw .forbidden }
                guard record.recipient != nil, !record.body.isEmpty else {
                    throw .invalid("a share needs a recipient device ID and a sealed body")
                }
            case .ack:
                guard isMember, let member = circle.members[keyID] else { throw .forbidden }
                let ack = try decoded { () throws(ProtocolError) in try ShareAck.decode(record.body) }
                guard ack.account == circle.account else { throw .invalid("an ack for another account") }
                guard ack.deviceID == keyID else { throw .forbidden }
                guard ack.isSigned(by: member.keys.signing) else { throw .invalid("the ack's signature does not verify") }
            }
            out.append(record)
        }
        return (out, circle)
    }

    /// Whether the signer may read this stored record: a member reads all; a
    /// candidate the log, challenges, reveals, its own requests and shares to it;
    /// a revoked device the log through its revocation.
    static func mayRead(_ record: RelayRecord, reader keyID: DeviceID, standing: Standing) -> Bool {
        switch standing {
        case .member: return true
        case .approvedInBatch: return false
        case .revoked(_, let through): return record.kind == .log && (record.logSeq.map { $0 <= through } ?? false)
        case .candidate:
            switch record.kind {
            case .log, .challenge, .reveal: return true
            case .request: return (try? FiledRequest.decode(record.body))?.deviceID == keyID
            case .share: return record.recipient == keyID
            case .ack: return false
            }
        }
    }

    /// Whether `record` is a log entry approving the device `keyID`.
    private static func approves(_ record: RelayRecord, _ keyID: DeviceID) -> Bool {
        guard record.kind == .log, let entry = try? LogEntry.decode(record.body), case .approve(let device, _) = entry.body else { return false }
        return device.deviceID == keyID
    }

    /// What a device still on pairing version 1 is told when it asks to join.
    static let retiredPairing = "pairing version 1 is retired: update keyvaultd on this device and enroll again"

    /// A protocol check that failed is the client's record: `invalid`, with what failed.
    private static func decoded<T>(_ body: () throws(ProtocolError) -> T) throws(Refusal) -> T {
        do {
            return try body()
        } catch {
            throw .invalid("a record does not verify: \(error)")
        }
    }
}
