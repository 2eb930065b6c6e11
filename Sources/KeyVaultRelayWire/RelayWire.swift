package import KeyVaultCrypto
package import KeyVaultProtocol

/// The relay service's JSON bodies (RELAY.md), shared by the daemon's client
/// and the server so the two cannot drift apart.
package enum RelayWire {
    /// A record as it crosses HTTP: binary as base64.
    package struct Record: Codable, Sendable, Equatable {
        package var kind: String
        package var recipient: DeviceID?
        package var logSeq: LogSeq?
        package var body: String

        package init(_ record: RelayRecord) {
            kind = record.kind.rawValue
            recipient = record.recipient
            logSeq = record.logSeq
            body = Base64.encode(record.body)
        }

        /// The record for `account`, or nil when a field is not what RELAY.md allows.
        package func record(account: AccountID) -> RelayRecord? {
            guard let kind = RelayRecord.Kind(rawValue: kind), let bytes = Base64.decode(body) else { return nil }
            return RelayRecord(kind: kind, account: account, recipient: recipient, logSeq: logSeq, body: bytes)
        }
    }

    package struct Row: Codable, Sendable, Equatable {
        package var cursor: RelayCursor
        package var kind: String
        package var recipient: DeviceID?
        package var logSeq: LogSeq?
        package var body: String

        package init(_ row: RelayRow) {
            cursor = row.cursor
            let record = Record(row.record)
            kind = record.kind
            recipient = record.recipient
            logSeq = record.logSeq
            body = record.body
        }

        package func row(account: AccountID) -> RelayRow? {
            Record(kind: kind, recipient: recipient, logSeq: logSeq, body: body).record(account: account)
                .map { RelayRow(cursor: cursor, record: $0) }
        }
    }

    package struct Publish: Codable, Sendable {
        package var records: [Record]
        package init(records: [Record]) { self.records = records }
    }

    package struct Published: Codable, Sendable {
        package var stored: Int
        package init(stored: Int) { self.stored = stored }
    }

    package struct Rows: Codable, Sendable {
        package var rows: [Row]
        package init(rows: [Row]) { self.rows = rows }
    }

    /// `POST /v1/accounts/{account}/candidates`.
    package struct Candidacy: Codable, Sendable {
        package var signing: String
        package var box: String
        package var identityToken: String

        package init(signing: SigningPublicKey, box: BoxPublicKey, identityToken: String) {
            self.signing = Base64.encode(signing.rawRepresentation)
            self.box = Base64.encode(box.rawRepresentation)
            self.identityToken = identityToken
        }
    }

    package struct Candidate: Codable, Sendable {
        package var candidate: String
        package var accountExists: Bool
        package init(candidate: String, accountExists: Bool) {
            self.candidate = candidate
            self.accountExists = accountExists
        }
    }

    /// Every refusal: `error` names it, `reason` is a sentence for a person.
    package struct Refusal: Codable, Sendable, Error {
        package var error: String
        package var reason: String
        package var seq: LogSeq?
        package init(error: String, reason: String, seq: LogSeq? = nil) {
            self.error = error
            self.reason = reason
            self.seq = seq
        }
    }
}

extension RelayWire.Record {
    init(kind: String, recipient: DeviceID?, logSeq: LogSeq?, body: String) {
        self.kind = kind
        self.recipient = recipient
        self.logSeq = logSeq
        self.body = body
    }
}
