import KeyVaultProtocol
import KeyVaultRelayStore

/// RELAY.md "Retention", as a pure function of one account's stored rows, its
/// verified circle and its live candidates: which rows no device needs any more.
///
/// - An enrollment's request, challenges and reveals (of either pairing
///   version), once its device is in the circle (approved, or revoked since)
///   or is no longer a live candidate; but a version 2 pairing approval, which
///   the approved device needs to trust its approval, stays as long as the
///   shares to that device.
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

    /// The devices whose shares the records may have settled: an ack's device (it may now hold
    /// every key), and a revoked device (it may no longer read them).
    static func shareRecipients(settledBy records: [RelayRecord]) -> Set<DeviceID> {
        var out = Set<DeviceID>()
        for record in records {
            switch record.kind {
            case .ack:
                if let ack = try? ShareAck.decode(record.body) { out.insert(ack.deviceID) }
            case .log:
                if let entry = try? LogEntry.decode(record.body), case .revoke(let deviceID) = entry.body { out.insert(deviceID) }
            default: continue
            }
        }
        return out
    }

    /// Whether every share to `deviceID` is settled: it is revoked, or holds every key the
    /// log announces (by the circle, and the acks among `rows`).
    static func sharesSettled(to deviceID: DeviceID, circle: CircleState, rows: [RelayRow]) -> Bool {
        guard let member = circle.members[deviceID] else { return false }
        if member.revoked { return true }
        return Set(circle.generations.map(\.keyID)).isSubset(of: held(circle: circle, rows: rows)[deviceID] ?? [])
    }

    /// What each device holds: keys it acknowledged (the acks among `rows`), and keys it made
    /// (genesis, its own rotations), for which no share ever comes and no ack is owed.
    static func held(circle: CircleState, rows: [RelayRow]) -> [DeviceID: Set<KeyID>] {
        var held: [DeviceID: Set<KeyID>] = [:]
        for entry in circle.entries {
            switch entry.body {
            case .genesis(_, _, let keyID, _), .announce(_, let keyID, _): held[entry.signer, default: []].insert(keyID)
            default: continue
            }
        }
        for row in rows where row.record.kind == .ack {
            if let ack = try? ShareAck.decode(row.record.body) { held[ack.deviceID, default: []].insert(ack.keyID) }
        }
        return held
    }

    static func removable(_ rows: [RelayRow], circle: CircleState, liveCandidates: Set<DeviceID>) -> [RelayCursor] {
        var out: [RelayCursor] = []
        var openRequests = Set<RequestHash>()
        for row in rows where row.record.kind == .request {
            if let request = try? FiledRequest.decode(row.record.body),
               circle.members[request.deviceID] == nil, liveCandidates.contains(request.deviceID) {
                openRequests.insert(request.hash)
            } else {
                out.append(row.cursor)
            }
        }
        let announced = Set(circle.generations.map(\.keyID))
        let held = held(circle: circle, rows: rows)
        // Shares to a device are settled once it holds every announced key, or is revoked.
        func settled(_ deviceID: DeviceID) -> Bool {
            guard let member = circle.members[deviceID] else { return false }
            return member.revoked || announced.isSubset(of: held[deviceID] ?? [])
        }
        // The device each approve entry approved, by request hash: where a pairing approval goes.
        var approved: [RequestHash: DeviceID] = [:]
        for entry in circle.entries {
            if case .approve(let device, let requestHash) = entry.body { approved[requestHash] = device.deviceID }
        }
        for row in rows {
            switch row.record.kind {
            case .challenge:
                // One that names no request answers none: it goes.
                guard let hash = FiledRequest.requestHash(ofChallenge: row.record.body) else { out.append(row.cursor); continue }
                if SignedEnvelope.label(of: row.record.body) == Labels.pairingApproval {
                    if let device = approved[hash], !settled(device) { continue }
                    if approved[hash] == nil, openRequests.contains(hash) { continue }
                    out.append(row.cursor)
                } else if !openRequests.contains(hash) {
                    out.append(row.cursor)
                }
            case .reveal:
                if !(FiledRequest.requestHash(ofReveal: row.record.body).map(openRequests.contains) ?? false) { out.append(row.cursor) }
            case .share:
                guard let recipient = row.record.recipient, circle.members[recipient] != nil else { continue }
                if settled(recipient) { out.append(row.cursor) }
            case .request, .log, .ack:
                continue
            }
        }
        return out.sorted()
    }
}
