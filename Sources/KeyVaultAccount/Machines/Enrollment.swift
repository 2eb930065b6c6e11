package import Foundation
package import KeyVaultCrypto
package import KeyVaultProtocol

/// Enrollment on one device under pairing version 2 (docs/PAIRING.md),
/// decided without I/O. On a new device: its own request, the first response
/// to it, and the approval it authenticates with the exchange's key. On a
/// trusted device: the requests it may answer, the one exchange each, and the
/// confirmations that come back. The CPace states themselves (non-copyable)
/// are kept by the account's owner beside this value; the session key, once
/// there is one, is kept here.
package struct Enrollment: Sendable {
    /// Where this device's own exchange stands.
    package enum Progress: Sendable, Equatable {
        /// The code is shown; the first response to the request is awaited.
        case awaitingResponse
        /// `Tb` verified and `Ta` sent: the approval is awaited. The response's hash is
        /// nil after a restart (the vault keeps the exchange's key, not the response).
        case confirmed(responseHash: ResponseHash?)
        /// The approval verified under the exchange's key: this device is a member.
        case approved
        /// The code did not match, the responder sees another circle, or (nil) a restart
        /// ended the exchange: a new request, with a new code, is needed.
        case failed(Pairing.Mismatch?)
    }

    /// What a person's typed code may lead to on a trusted device.
    package enum Answer: Sendable {
        /// No live request from that device here (never came, expired, dismissed).
        case unknown
        /// This request's code was tried here already: one exchange per code.
        case alreadyTried
        /// The device asked with pairing version 1, which this device no longer speaks.
        case retired(DeviceKeys)
        case respond(PairingRequest)
    }

    /// A request under pairing version 1 (commit, challenge, reveal): never
    /// answered, but listed, so the person learns on this device that the new
    /// one must update keyvaultd (over an embedded relay nothing else tells it).
    package struct RetiredRequest: Sendable, Equatable {
        package var device: DeviceKeys
        package var requestedAt: Date
    }

    // The new device's side.
    /// This device's own request, while it joins.
    package private(set) var ownRequest: PairingRequest?
    /// Set while this device joins (its request is in the vault), even if the request is gone from memory.
    package private(set) var isJoining: Bool
    package private(set) var joiningSince: Date
    package private(set) var progress: Progress
    /// The code this device shows, in memory only.
    package private(set) var pairingCode: String?
    private var sessionKey: CPace.SessionKey?
    /// The exchange this device confirmed before it asked again (memory only): the trusted device
    /// that took its confirmation may still approve it, and that approval is as authentic as one
    /// of the new exchange. Without it, a device that asked again while its approval was on the way
    /// would be listed in the circle and never trust it.
    private var previous: (request: PairingRequest, sessionKey: CPace.SessionKey)?
    private var approvals: [PairingApproval] = []

    // The trusted device's side.
    /// Requests from new devices, by device ID.
    package private(set) var requests: [DeviceID: PairingRequest] = [:]
    /// When this device first received each request: its own clock.
    private var firstSeen: [DeviceID: Date] = [:]
    package private(set) var dismissed: Set<DeviceID>
    /// Requests (by hash) this device has answered: each gets one exchange.
    private var responded: Set<RequestHash> = []
    /// Confirmations read, by the hash of the response they answer.
    private var confirmations: [ResponseHash: PairingConfirmation] = [:]
    package var confirmationCount: Int { confirmations.count }
    /// Version 1 requests, by device ID.
    private var retired: [DeviceID: RetiredRequest] = [:]

    /// `joining`: the vault holds this device's request (`ownRequest` when it still decodes
    /// as version 2), and the exchange, held in memory only, ended with the last start.
    package init(joining: Bool = false, ownRequest: PairingRequest? = nil, since: Date = Date(timeIntervalSince1970: 0),
                dismissed: Set<DeviceID> = []) {
        self.isJoining = joining
        self.ownRequest = ownRequest
        self.joiningSince = ownRequest?.requestedDate ?? since
        self.progress = joining ? .failed(nil) : .awaitingResponse
        self.dismissed = dismissed
    }

    // MARK: The new device

    /// A new request was made (and stored): its code is shown until the exchange ends.
    package mutating func requested(_ request: PairingRequest, code: String) {
        if case .confirmed = progress, let old = ownRequest, let sessionKey { previous = (old, sessionKey) } else { previous = nil }
        ownRequest = request
        isJoining = true
        joiningSince = request.requestedDate
        pairingCode = code
        progress = .awaitingResponse
        sessionKey = nil
        approvals = []
    }

    /// Whether `response` (accepted under the circle) is the one this device's exchange takes: the first for its request.
    package func takes(_ response: PairingResponse) -> Bool {
        guard let request = ownRequest, progress == .awaitingResponse else { return false }
        return response.requestHash == request.hash
    }

    /// The exchange's answer to the response taken (`Pairing.answer`).
    package mutating func answered(_ answer: Pairing.Answer) {
        switch answer {
        case .confirmed(let confirmation, let key):
            progress = .confirmed(responseHash: confirmation.responseHash)
            sessionKey = key
        case .mismatch(_, let why):
            progress = .failed(why)
            pairingCode = nil
        }
    }

    /// A pairing approval read from the relay (checked as a member's record). Kept
    /// until it authenticates an approve entry of this device's log.
    package mutating func approvalArrived(_ approval: PairingApproval) {
        guard approval.requestHash == ownRequest?.hash || approval.requestHash == previous?.request.hash else { return }
        approvals.append(approval)
    }

    /// What checking the approvals read so far found.
    package enum ApprovalCheck: Sendable, Equatable {
        /// An approval is authentic: this device is a member.
        case authentic
        /// None yet (or only approvals whose approve entry is not in the log yet).
        case waiting
        /// This many approvals named an entry of the log and failed under the
        /// exchange's key: refused, and forgotten (they can never verify).
        case refused(Int)
    }

    /// `.authentic` when this device's approval is authentic now: an approve entry of
    /// `circle` for exactly its request, authenticated under the exchange's key by
    /// an approval from the entry's signer. Then, and only then, it is a member.
    package mutating func authenticate(in circle: CircleState) -> ApprovalCheck {
        // The exchanges an approval may close: this one once confirmed, and the one confirmed before it.
        var exchanges: [(request: PairingRequest, sessionKey: CPace.SessionKey)] = previous.map { [$0] } ?? []
        if case .confirmed = progress, let request = ownRequest, let sessionKey { exchanges.append((request, sessionKey)) }
        guard !exchanges.isEmpty else { return .waiting }
        var early: [PairingApproval] = []
        var refused = 0
        for approval in approvals {
            guard let entry = circle.entry(hash: approval.entryHash) else {
                early.append(approval)
                continue
            }
            let closes = exchanges.first { $0.request.hash == approval.requestHash }
            if let (request, sessionKey) = closes,
               Pairing.isAuthenticApproval(approval, of: entry, request: request, sessionKey: sessionKey, circle: circle) {
                progress = .approved
                self.sessionKey = nil
                previous = nil
                approvals = []
                pairingCode = nil
                return .authentic
            }
            refused += 1
        }
        approvals = early
        return refused > 0 ? .refused(refused) : .waiting
    }

    /// After a restart: the exchange's key, kept wrapped in the vault once `Ta` went
    /// out, lets this device authenticate the approval it was waiting for.
    package mutating func restore(sessionKey: CPace.SessionKey) {
        guard isJoining, case .failed(nil) = progress else { return }
        self.sessionKey = sessionKey
        progress = .confirmed(responseHash: nil)
    }

    /// This device holds a key of the circle that approved it: it has joined.
    package mutating func joined() {
        ownRequest = nil
        previous = nil
        isJoining = false
        pairingCode = nil
        progress = .approved
    }

    /// Whether this device may take what the circle sends it (shares): a device that
    /// founded the account or joined, or one whose approval authenticated.
    package var trustsItsCircle: Bool {
        !isJoining || progress == .approved
    }

    // MARK: The trusted device

    /// A request read from the relay. Kept (answers true) if this device is
    /// trusted, the device is not in the circle yet, and the request names a
    /// head of this circle; the first time it is seen is remembered.
    package mutating func requestArrived(_ request: PairingRequest, circle: CircleState, me: DeviceID, at now: Date) -> Bool {
        guard keeps(request.device.deviceID, naming: request.headHash, circle: circle, me: me, at: now) else { return false }
        requests[request.device.deviceID] = request
        boundRequests()
        return true
    }

    /// Requests kept at once, of both versions: a relay, untrusted, may file as many as it
    /// likes, so past this the one first seen longest ago is forgotten (the newest, where a
    /// person pairing now finds theirs, are kept), and taking one in costs the same however
    /// many came before.
    package static let maxRequests = 64

    private mutating func boundRequests() {
        while requests.count + retired.count > Self.maxRequests {
            let ids = Array(requests.keys) + Array(retired.keys)
            guard let oldest = ids.min(by: { (firstSeen[$0] ?? .distantPast, $0) < (firstSeen[$1] ?? .distantPast, $1) }) else { return }
            requests[oldest] = nil
            retired[oldest] = nil
            firstSeen[oldest] = nil
        }
    }

    /// A version 1 request read from the relay, kept by the same rules as a version 2 one.
    package mutating func retiredRequestArrived(device: DeviceKeys, headHash: LogHash, requestedAt: Date, circle: CircleState,
                                               me: DeviceID, at now: Date) -> Bool {
        guard keeps(device.deviceID, naming: headHash, circle: circle, me: me, at: now) else { return false }
        retired[device.deviceID] = RetiredRequest(device: device, requestedAt: requestedAt)
        boundRequests()
        return true
    }

    /// Whether a request from `deviceID` naming `headHash` is kept; if it is, when it was first seen.
    private mutating func keeps(_ deviceID: DeviceID, naming headHash: LogHash, circle: CircleState, me: DeviceID, at now: Date) -> Bool {
        guard circle.isTrusted(me), circle.members[deviceID] == nil, circle.contains(hash: headHash) else { return false }
        firstSeen[deviceID] = min(firstSeen[deviceID] ?? now, now)
        return true
    }

    /// Version 1 requests to list, by the rules `live` keeps (no newer request from the same device).
    package func retiredLive(at now: Date, lifetime: TimeInterval) -> [RetiredRequest] {
        retired.values.filter { request in
            let id = request.device.deviceID
            return requests[id] == nil && !dismissed.contains(id) && now.timeIntervalSince(firstSeen[id] ?? now) < lifetime
        }.sorted { ($0.requestedAt, $0.device.deviceID) < ($1.requestedAt, $1.device.deviceID) }
    }

    /// A confirmation read from the relay, for a request this device holds. Answers whether it is kept.
    package mutating func confirmationArrived(_ body: [UInt8]) throws(ProtocolError) -> Bool {
        guard let hash = PairingConfirmation.requestHash(of: body), let request = requests.values.first(where: { $0.hash == hash }) else {
            return false
        }
        let confirmation = try PairingConfirmation.decode(body, request: request)
        confirmations[confirmation.responseHash] = confirmation
        return true
    }

    /// The confirmation of this device's response, once read.
    package func confirmation(of response: PairingResponse) -> PairingConfirmation? {
        confirmations[response.hash]
    }

    /// Whether the new device answered (confirmed or refused) a response to `request` other than
    /// `response` (another trusted device's, or this device's from before its daemon restarted): it
    /// answers one response per request, so no confirmation of `response` can come. With no
    /// `response` (none made yet), any answer to the request.
    package func answeredAnother(to request: RequestHash, than response: ResponseHash? = nil) -> Bool {
        confirmations.values.contains { $0.requestHash == request && $0.responseHash != response }
    }

    /// The circle changed: requests from devices now in it are answered.
    package mutating func circleChanged(_ circle: CircleState) {
        requests = requests.filter { circle.members[$0.key] == nil }
        retired = retired.filter { circle.members[$0.key] == nil }
    }

    /// Requests this device answers, lists and may approve: not dismissed, not
    /// tried here, and not past `lifetime` since it first received them, oldest first.
    package func live(at now: Date, lifetime: TimeInterval) -> [PairingRequest] {
        requests.values.filter { request in
            let id = request.device.deviceID
            return !dismissed.contains(id) && !responded.contains(request.hash) && now.timeIntervalSince(firstSeen[id] ?? now) < lifetime
        }.sorted { ($0.requestedAt, $0.device.deviceID) < ($1.requestedAt, $1.device.deviceID) }
    }

    /// A person typed a code for the request from `deviceID`.
    package func answer(for deviceID: DeviceID, at now: Date, lifetime: TimeInterval) -> Answer {
        if let request = requests[deviceID], responded.contains(request.hash) { return .alreadyTried }
        guard let request = live(at: now, lifetime: lifetime).first(where: { $0.device.deviceID == deviceID }) else {
            if let old = retiredLive(at: now, lifetime: lifetime).first(where: { $0.device.deviceID == deviceID }) { return .retired(old.device) }
            return .unknown
        }
        return .respond(request)
    }

    /// This device answered `request`: its code is spent here, whatever comes back.
    package mutating func responded(to request: PairingRequest) {
        responded.insert(request.hash)
    }

    /// Whether this device holds a request from `deviceID` (one to answer, or a version 1 one).
    package func holdsRequest(from deviceID: DeviceID) -> Bool {
        requests[deviceID] != nil || retired[deviceID] != nil
    }

    /// A person says the request from `deviceID` is not theirs. Answers false
    /// if this device holds no such request.
    package mutating func dismiss(_ deviceID: DeviceID) -> Bool {
        guard holdsRequest(from: deviceID) else { return false }
        dismissed.insert(deviceID)
        return true
    }
}
