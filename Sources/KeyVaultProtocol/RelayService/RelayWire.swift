public import KeyVaultCrypto

/// The relay service's JSON bodies (RELAY.md), shared by the daemon's client
/// and the server so the two cannot drift apart.
public enum RelayWire {
    /// A record as it crosses HTTP: binary as base64.
    public struct Record: Codable, Sendable, Equatable {
        public var kind: String
        public var recipient: String?
        public var logSeq: UInt64?
        public var body: String

        public init(_ record: RelayRecord) {
            kind = record.kind.rawValue
            recipient = record.recipient
            logSeq = record.logSeq
            body = Base64.encode(record.body)
        }

        /// The record for `account`, or nil when a field is not what RELAY.md allows.
        public func record(account: AccountID) -> RelayRecord? {
            guard let kind = RelayRecord.Kind(rawValue: kind), let bytes = Base64.decode(body) else { return nil }
            return RelayRecord(kind: kind, account: account, recipient: recipient, logSeq: logSeq, body: bytes)
        }
    }

    public struct Row: Codable, Sendable, Equatable {
        public var cursor: Int64
        public var kind: String
        public var recipient: String?
        public var logSeq: UInt64?
        public var body: String

        public init(_ row: RelayRow) {
            cursor = row.cursor
            let record = Record(row.record)
            kind = record.kind
            recipient = record.recipient
            logSeq = record.logSeq
            body = record.body
        }

        public func row(account: AccountID) -> RelayRow? {
            Record(kind: kind, recipient: recipient, logSeq: logSeq, body: body).record(account: account)
                .map { RelayRow(cursor: cursor, record: $0) }
        }
    }

    public struct Publish: Codable, Sendable {
        public var records: [Record]
        public init(records: [Record]) { self.records = records }
    }

    public struct Published: Codable, Sendable {
        public var stored: Int
        public init(stored: Int) { self.stored = stored }
    }

    public struct Rows: Codable, Sendable {
        public var rows: [Row]
        public init(rows: [Row]) { self.rows = rows }
    }

    /// `POST /v1/accounts/{account}/candidates`.
    public struct Candidacy: Codable, Sendable {
        public var signing: String
        public var box: String
        public var identityToken: String

        public init(signing: SigningPublicKey, box: BoxPublicKey, identityToken: String) {
            self.signing = Base64.encode(signing.rawRepresentation)
            self.box = Base64.encode(box.rawRepresentation)
            self.identityToken = identityToken
        }
    }

    public struct Candidate: Codable, Sendable {
        public var candidate: String
        public var accountExists: Bool
        public init(candidate: String, accountExists: Bool) {
            self.candidate = candidate
            self.accountExists = accountExists
        }
    }

    /// Every refusal: `error` names it, `reason` is a sentence for a person.
    public struct Refusal: Codable, Sendable, Error {
        public var error: String
        public var reason: String
        public var seq: UInt64?
        public init(error: String, reason: String, seq: UInt64? = nil) {
            self.error = error
            self.reason = reason
            self.seq = seq
        }
    }
}

extension RelayWire.Record {
    init(kind: String, recipient: String?, logSeq: UInt64?, body: String) {
        self.kind = kind
        self.recipient = recipient
        self.logSeq = logSeq
        self.body = body
    }
}
