import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultStore

/// RELAY.md "Retention", as a pure function of one account's stored rows, its
/// verified circle and its live candidates: which rows no device needs any more.
///
/// - An enrollment's request, challenges and reveals, once its device is in the
///   circle (approved, or revoked since) or is no longer a live candidate.
/// - Shares to a device that holds every key the log announces (it acknowledged
///   each, or made it): each share carries an announced key, so all are settled;
///   and every share to a revoked device (it may no longer read them).
///
/// The log is kept whole (it is the account), and so are acknowledgements
/// (one per device and key: they tell members who holds what).
enum Retention {
    /// Whether storing this record may have made rows removable: an approval or a
    /// revocation settles enrollments and shares, an acknowledgement settles shares.
    static func settlesSomething(_ record: RelayRecord) -> Bool {
        switch record.kind {
        case .ack: return true
        case .log:
            guard let entry = try? LogEntry.decode(record.body) else { return false }
            switch entry.body {
            case .approve, .revoke: return true
            default: return false
            }
        default: return false
        }
    }

    static func removable(_ rows: [RelayRow], circle: CircleState, liveCandidates: Set<String>) -> [Int64] {
        var out: [Int64] = []
        var openRequests = Set<[UInt8]>()
        for row in rows where row.record.kind == .request {
            if let request = try? EnrollmentRequest.decode(row.record.body),
               circle.members[request.device.deviceID] == nil, liveCandidates.contains(request.device.deviceID) {
                openRequests.insert(request.hash)
            } else {
                out.append(row.cursor)
            }
        }
        let announced = Set(circle.generations.map(\.keyID))
        // What each device holds: keys it acknowledged, and keys it made (genesis, its own rotations),
        // for which no share ever comes and no ack is owed.
        var held: [String: Set<String>] = [:]
        for entry in circle.entries {
            switch entry.body {
            case .genesis(_, _, let keyID, _), .announce(_, let keyID, _): held[entry.signer, default: []].insert(Hex.encode(keyID))
            default: continue
            }
        }
        for row in rows where row.record.kind == .ack {
            if let ack = try? ShareAck.decode(row.record.body) { held[ack.deviceID, default: []].insert(ack.keyID) }
        }
        for row in rows {
            switch row.record.kind {
            case .challenge:
                if !openRequests.contains(EnrollmentChallenge.requestHash(of: row.record.body) ?? []) { out.append(row.cursor) }
            case .reveal:
                if !openRequests.contains(EnrollmentReveal.requestHash(of: row.record.body) ?? []) { out.append(row.cursor) }
            case .share:
                guard let recipient = row.record.recipient, let member = circle.members[recipient] else { continue }
                if member.revoked || announced.isSubset(of: held[recipient] ?? []) { out.append(row.cursor) }
            case .request, .log, .ack:
                continue
            }
        }
        return out.sorted()
    }
}
