public import FoundationEssentials

/// What the daemon answered a request that has a value when it is `ready`.
///
/// The daemon's `state` decides the case (docs/API.md, "Answers"); a client
/// switches on it and never parses the sentence in a refusal.
public enum DaemonAnswer<Value: Sendable>: Sendable {
    /// The answer is here.
    case ready(Value)
    /// The key is expected on this device but has not arrived: wait (a key
    /// read with `wait:`, or the event stream) and ask again.
    case pending(Pending)
    /// Anything else: locked, unknown, revoked, forbidden, denied, throttled,
    /// destroyed, damaged, invalid or the daemon's own error.
    case refused(Refusal)

    /// The value if `ready`.
    public var value: Value? {
        if case .ready(let value) = self { return value }
        return nil
    }

    /// The same answer with its value transformed.
    public func map<Other: Sendable>(_ transform: (Value) throws -> Other) rethrows -> DaemonAnswer<Other> {
        switch self {
        case .ready(let value): return .ready(try transform(value))
        case .pending(let pending): return .pending(pending)
        case .refused(let refusal): return .refused(refusal)
        }
    }
}

/// Why a key is not here yet, since when, and when to ask again.
public struct Pending: Sendable, Equatable {
    public enum Reason: Sendable, Equatable, CustomStringConvertible {
        /// This device asked to join the account and waits for a trusted device to approve it.
        case awaitingApproval
        /// The pairing exchange failed (a wrong code): enroll again, with a new code.
        case codeMismatch
        /// The key's share is on its way from a device that holds it.
        case awaitingDelivery
        /// This device founded the account; the relay has not taken it yet.
        case awaitingRelay
        /// A reason this client does not know (a newer daemon).
        case other(String)

        init(_ text: String) {
            switch text {
            case "awaiting-approval": self = .awaitingApproval
            case "code-mismatch": self = .codeMismatch
            case "awaiting-delivery": self = .awaitingDelivery
            case "awaiting-relay": self = .awaitingRelay
            default: self = .other(text)
            }
        }

        /// As the daemon says it.
        public var description: String {
            switch self {
            case .awaitingApproval: return "awaiting-approval"
            case .codeMismatch: return "code-mismatch"
            case .awaitingDelivery: return "awaiting-delivery"
            case .awaitingRelay: return "awaiting-relay"
            case .other(let text): return text
            }
        }
    }

    public var reason: Reason
    /// When the wait began, as the daemon says.
    public var since: Date?
    /// When the daemon suggests asking again.
    public var retryAfter: Duration
    /// On an enrolling device: its ID, and the pairing code to read out to a trusted device.
    public var deviceID: DeviceIdentifier?
    public var pairingCode: String?
}

/// A refusal: the daemon's `state` and its sentence, for a person.
public struct Refusal: Error, Sendable, Equatable, CustomStringConvertible {
    public enum State: String, Sendable, Equatable {
        case locked, unknown, revoked, forbidden, denied, throttled, destroyed, damaged, invalid, error
    }

    public var state: State
    public var message: String
    /// `throttled`, or a daemon at its connection limit: when to try again.
    public var retryAfter: Duration?

    public var description: String { "\(state.rawValue): \(message)" }
}
