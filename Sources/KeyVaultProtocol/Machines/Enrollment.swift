public import Foundation
import KeyVaultCrypto

/// Enrollment on one device, decided without I/O. On a new device: its own
/// request, the first challenge that answers it (and so the pairing code it
/// shows), and its reveal, sent once. On a trusted device: the requests it
/// answers with a challenge, the reveals that come back, and the codes a
/// person types. The owner persists what this value asks it to, vault first,
/// and publishes what `owed` lists.
public struct Enrollment: Sendable {
    /// What this device owes the relay.
    public enum Outgoing: Sendable, Equatable {
        case challenge(EnrollmentRequest)
        case reveal(EnrollmentRequest, EnrollmentChallenge, secret: [UInt8])
    }

    /// The verdict on a pairing code typed for a request.
    public enum Approval: Sendable, Equatable {
        /// No live request from that device here (never came, expired, dismissed).
        case unknown
        /// Too many wrong codes: the request is cancelled.
        case cancelled
        /// The new device has not revealed its secret yet.
        case notAnswered
        /// Wrong: this many wrong codes now (to be kept in the vault).
        case wrongCode(failures: Int)
        case matched(EnrollmentRequest)
    }

    public static let maxWrongCodes = 5

    // The new device's side.
    /// This device's own request, while it waits to be approved.
    public private(set) var ownRequest: EnrollmentRequest?
    private var secret: [UInt8]?
    private var chosen: EnrollmentChallenge?
    /// The code this device shows, once a trusted device has challenged its request.
    public private(set) var pairingCode: String?
    /// Its reveal went out (kept in the vault: it is sent once).
    public private(set) var revealed: Bool

    // The trusted device's side.
    /// Requests from new devices, by device ID.
    public private(set) var requests: [String: EnrollmentRequest] = [:]
    /// When this device first received each request: its own clock, since a
    /// request's signed time is the relay's to choose.
    private var firstSeen: [String: Date] = [:]
    public private(set) var dismissed: Set<String>
    /// Wrong codes typed here, by requesting device.
    public private(set) var wrongCodes: [String: Int]
    /// Requests (by hash) this device has challenged.
    private var challenged: Set<String> = []
    /// Challenges from trusted devices (by hash), and reveals (by device).
    private var challenges: [String: EnrollmentChallenge] = [:]
    private var reveals: [String: EnrollmentReveal] = [:]

    public init(ownRequest: EnrollmentRequest? = nil, secret: [UInt8]? = nil, revealed: Bool = false,
                dismissed: Set<String> = [], wrongCodes: [String: Int] = [:]) {
        self.ownRequest = ownRequest
        self.secret = secret
        self.revealed = revealed
        self.dismissed = dismissed
        self.wrongCodes = wrongCodes
    }

    // MARK: Events from the relay

    /// A request read from the relay. Kept (answers true) if this device is
    /// trusted, the device is not in the circle yet, and the request names a
    /// head of this circle; the first time it is seen is remembered.
    public mutating func requestArrived(_ request: EnrollmentRequest, circle: CircleState, me: String, at now: Date) -> Bool {
        let id = request.device.deviceID
        guard circle.isTrusted(me), circle.members[id] == nil, circle.contains(hash: request.headHash) else { return false }
        requests[id] = request
        firstSeen[id] = min(firstSeen[id] ?? now, now)
        return true
    }

    /// A challenge read from the relay, checked against `circle`. A trusted
    /// device remembers it; a new device takes the first one for its own
    /// request, which gives it its pairing code (answers true then).
    public mutating func challengeArrived(_ body: [UInt8], circle: CircleState, me: String) throws(ProtocolError) -> Bool {
        let challenge = try EnrollmentChallenge.accept(body, in: circle)
        challenges[Hex.encode(challenge.hash)] = challenge
        if challenge.challenger == me { challenged.insert(Hex.encode(challenge.requestHash)) }
        guard let request = ownRequest, let secret, chosen == nil, challenge.requestHash == request.hash else { return false }
        chosen = challenge
        pairingCode = PairingCode.derive(requestHash: request.hash, challenge: challenge.nonce, secret: secret)
        return true
    }

    /// A reveal read from the relay, for a request this device holds and a
    /// challenge a trusted device made. Answers whether it is kept.
    public mutating func revealArrived(_ body: [UInt8]) throws(ProtocolError) -> Bool {
        guard let hash = EnrollmentReveal.requestHash(of: body), let request = requests.values.first(where: { $0.hash == hash }) else { return false }
        let known = challenges
        let reveal = try EnrollmentReveal.accept(body, for: request) { known[Hex.encode($0)] != nil }
        reveals[request.device.deviceID] = reveal
        return true
    }

    /// The circle changed: requests from devices now in it are answered.
    public mutating func circleChanged(_ circle: CircleState) {
        requests = requests.filter { circle.members[$0.key] == nil }
    }

    /// This device holds a key of the circle that trusts it: it has joined.
    public mutating func joined() {
        ownRequest = nil
    }

    // MARK: Decisions

    /// Requests this device answers, lists and may approve: not dismissed and
    /// not past `lifetime` since it first received them, oldest first.
    public func live(at now: Date, lifetime: TimeInterval) -> [EnrollmentRequest] {
        requests.values.filter { request in
            let id = request.device.deviceID
            return !dismissed.contains(id) && now.timeIntervalSince(firstSeen[id] ?? now) < lifetime
        }.sorted { ($0.requestedAt, $0.device.deviceID) < ($1.requestedAt, $1.device.deviceID) }
    }

    /// What a person is shown: live requests not cancelled by wrong codes.
    public func listed(at now: Date, lifetime: TimeInterval) -> [EnrollmentRequest] {
        live(at: now, lifetime: lifetime).filter { (wrongCodes[$0.device.deviceID] ?? 0) < Self.maxWrongCodes }
    }

    /// What this device owes the relay now: a challenge for every live request
    /// it has not answered (if trusted), or its reveal, once (if it has a
    /// challenge). There is no cap: junk requests cannot starve a genuine one,
    /// and a challenge gives a relay nothing unless a person types a code for
    /// that very request.
    public func owed(at now: Date, lifetime: TimeInterval, circle: CircleState, me: String) -> [Outgoing] {
        var out: [Outgoing] = []
        if circle.isTrusted(me) {
            out += live(at: now, lifetime: lifetime).filter { !challenged.contains(Hex.encode($0.hash)) }.map { .challenge($0) }
        }
        if let request = ownRequest, let challenge = chosen, let secret, !revealed {
            out.append(.reveal(request, challenge, secret: secret))
        }
        return out
    }

    /// `outgoing` went out (or waits in the outbox): never owed again.
    public mutating func sent(_ outgoing: [Outgoing]) {
        for item in outgoing {
            switch item {
            case .challenge(let request): challenged.insert(Hex.encode(request.hash))
            case .reveal: revealed = true
            }
        }
    }

    /// A person typed `code` for the request from `deviceID`. Compared in
    /// constant time; a wrong one counts (the caller keeps the count in the
    /// vault), and the fifth cancels the request.
    public mutating func check(code: String, from deviceID: String, at now: Date, lifetime: TimeInterval) -> Approval {
        guard let request = live(at: now, lifetime: lifetime).first(where: { $0.device.deviceID == deviceID }) else { return .unknown }
        let failures = wrongCodes[deviceID] ?? 0
        guard failures < Self.maxWrongCodes else { return .cancelled }
        guard let reveal = reveals[deviceID], let challenge = challenges[Hex.encode(reveal.challengeHash)] else { return .notAnswered }
        let expected = PairingCode.derive(requestHash: request.hash, challenge: challenge.nonce, secret: reveal.secret)
        guard ConstantTime.equal(Array(code.utf8), Array(expected.utf8)) else {
            wrongCodes[deviceID] = failures + 1
            return .wrongCode(failures: failures + 1)
        }
        return .matched(request)
    }

    /// A person says the request from `deviceID` is not theirs. Answers false
    /// if this device holds no such request.
    public mutating func dismiss(_ deviceID: String) -> Bool {
        guard requests[deviceID] != nil else { return false }
        dismissed.insert(deviceID)
        return true
    }
}
