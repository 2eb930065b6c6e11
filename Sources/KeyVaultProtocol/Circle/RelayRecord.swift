import FoundationEssentials
import KeyVaultCrypto

/// What may cross to the relay, by type: public device requests, signed log
/// entries, sealed shares and signed acknowledgements. Each is built from an
/// encoded protocol record; none can hold a `SecretKey` or `SecureBytes`.
package struct RelayRecord: Sendable, Equatable {
    package enum Kind: String, Sendable {
        case request, challenge, reveal, log, share, ack
    }

    package var kind: Kind
    package var account: AccountID
    /// The device a share is sealed to.
    package var recipient: DeviceID?
    /// A log entry's sequence number (the relay keeps one entry per number).
    package var logSeq: LogSeq?
    package var body: [UInt8]

    package init(kind: Kind, account: AccountID, recipient: DeviceID?, logSeq: LogSeq?, body: [UInt8]) {
        self.kind = kind
        self.account = account
        self.recipient = recipient
        self.logSeq = logSeq
        self.body = body
    }

    package static func request(_ request: EnrollmentRequest) -> RelayRecord {
        RelayRecord(kind: .request, account: request.account, recipient: nil, logSeq: nil, body: request.encoded)
    }

    package static func challenge(_ challenge: EnrollmentChallenge) -> RelayRecord {
        RelayRecord(kind: .challenge, account: challenge.account, recipient: nil, logSeq: nil, body: challenge.encoded)
    }

    package static func reveal(_ reveal: EnrollmentReveal) -> RelayRecord {
        RelayRecord(kind: .reveal, account: reveal.account, recipient: nil, logSeq: nil, body: reveal.encoded)
    }

    /// Pairing version 2 (docs/PAIRING.md) travels in the same kinds of row: the request in
    /// `request`, the member's response and approval in `challenge`, the new device's confirmation in `reveal`.
    package static func request(_ request: PairingRequest) -> RelayRecord {
        RelayRecord(kind: .request, account: request.account, recipient: nil, logSeq: nil, body: request.encoded)
    }

    package static func challenge(_ response: PairingResponse) -> RelayRecord {
        RelayRecord(kind: .challenge, account: response.account, recipient: nil, logSeq: nil, body: response.encoded)
    }

    package static func challenge(_ approval: PairingApproval) -> RelayRecord {
        RelayRecord(kind: .challenge, account: approval.account, recipient: nil, logSeq: nil, body: approval.encoded)
    }

    package static func reveal(_ confirmation: PairingConfirmation) -> RelayRecord {
        RelayRecord(kind: .reveal, account: confirmation.account, recipient: nil, logSeq: nil, body: confirmation.encoded)
    }

    package static func log(_ entry: LogEntry) -> RelayRecord {
        RelayRecord(kind: .log, account: entry.account, recipient: nil, logSeq: entry.seq, body: entry.encoded)
    }

    /// No record of the protocol comes near this (the largest, an approve entry or a
    /// pairing record, is a few KiB): a relay row past it is not read into memory.
    package static let maxBodyByteCount = 64 * 1024

    /// `sealed` is the output of `KeyShare.seal`: only ciphertext.
    package static func share(account: AccountID, recipient: DeviceID, sealed: [UInt8]) -> RelayRecord {
        RelayRecord(kind: .share, account: account, recipient: recipient, logSeq: nil, body: sealed)
    }

    package static func ack(_ ack: ShareAck) -> RelayRecord {
        RelayRecord(kind: .ack, account: ack.account, recipient: nil, logSeq: nil, body: ack.encoded)
    }
}

/// A record as the relay stored it, with its place in the relay's order.
package struct RelayRow: Sendable, Equatable {
    package var cursor: RelayCursor
    package var record: RelayRecord

    package init(cursor: RelayCursor, record: RelayRecord) {
        self.cursor = cursor
        self.record = record
    }
}

package enum RelayError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Another device appended a log entry with that number first.
    case logSeqTaken(LogSeq)
    case unreachable(String)
    case badAddress(String)
    /// The relay service would not take this device's identity token: the sentence says why.
    case identity(String)
    /// The relay service answers, and refuses this device this request (not a member, a
    /// record it will not take): the sentence says why. Not an outage.
    case refused(String)
    /// The relay service needs this device's signature for the account, and its key is
    /// locked away: the request waits for an unlock. Not an outage.
    case needsUnlock
    /// The store answered this operation with an error of its own (one shard that does not
    /// answer, a lock not granted in time): this operation failed, the store did not.
    case storeRefused(String)
    /// A signed write's nonce was spent before, by the write it came with.
    case nonceSpent

    /// Whether the relay answered (an outage is the other failures).
    package var isAnswer: Bool {
        switch self {
        case .logSeqTaken, .identity, .refused, .needsUnlock, .storeRefused, .nonceSpent: return true
        case .unreachable, .badAddress: return false
        }
    }

    package var description: String {
        switch self {
        case .logSeqTaken(let seq): return "log entry \(seq) was taken by another device"
        case .unreachable(let why): return "the relay is unreachable: \(why)"
        case .badAddress(let why): return "bad --relay: \(why)"
        case .identity(let why): return "the relay service refused the identity token: \(why)"
        case .refused(let why): return "the relay service refused: \(why)"
        case .needsUnlock: return "the account is locked: the relay service needs this device's signature"
        case .storeRefused(let why): return "the store refused the operation: \(why)"
        case .nonceSpent: return "the request's nonce was spent before"
        }
    }
}
