public import Foundation
public import KeyVaultCrypto
public import KeyVaultProtocol

/// An account's row: public facts and the KDF's salt and cost.
public struct AccountRecord: Sendable, Equatable {
    package init(id: AccountID, createdAt: Date, kdf: KDFParameters, salt: [UInt8], accessibility: Accessibility, deviceID: String, signingPublicKey: SigningPublicKey, boxPublicKey: BoxPublicKey, currentGeneration: Int, failedUnlocks: Int, backoffUntil: Date, deviceName: String = "", currentKeyID: String = "") {
        self.id = id
        self.createdAt = createdAt
        self.kdf = kdf
        self.salt = salt
        self.accessibility = accessibility
        self.deviceID = deviceID
        self.signingPublicKey = signingPublicKey
        self.boxPublicKey = boxPublicKey
        self.currentGeneration = currentGeneration
        self.failedUnlocks = failedUnlocks
        self.backoffUntil = backoffUntil
        self.deviceName = deviceName
        self.currentKeyID = currentKeyID
    }

    public var id: AccountID
    public var createdAt: Date
    public var kdf: KDFParameters
    public var salt: [UInt8]
    public var accessibility: Accessibility
    public var deviceID: String
    public var signingPublicKey: SigningPublicKey
    public var boxPublicKey: BoxPublicKey
    public var currentGeneration: Int
    public var failedUnlocks: Int
    public var backoffUntil: Date
    public var deviceName: String = ""
    /// The current key's ID ("" before the first key; vaults before v5 have none).
    public var currentKeyID: String = ""
}

/// A keychain item as stored: its attributes and its wrapped bytes.
public struct StoredItem: Sendable, Equatable {
    package init(attributes: KeychainItem, wrapped: [UInt8]) {
        self.attributes = attributes
        self.wrapped = wrapped
    }

    public var attributes: KeychainItem
    public var wrapped: [UInt8]

    /// Which secret this is: unique per account.
    public var slot: ItemSlot { ItemSlot(kind: attributes.kind, generation: attributes.generation, keyID: attributes.keyID) }

    public var context: WrapContext {
        // The account string was validated when the item was written.
        WrapContext(account: try! AccountID(validating: attributes.account), kind: attributes.kind, generation: attributes.generation)
    }
}

/// An item's place in an account: its kind, generation number and key ID.
public struct ItemSlot: Sendable, Hashable {
    public var kind: ItemKind
    public var generation: Int
    public var keyID: String
}

/// Everything the vault holds about one account.
public struct AccountSnapshot: Sendable {
    package init(account: AccountRecord, generations: [KeyGeneration], items: [StoredItem], circleLog: [[UInt8]] = [], enrollment: [UInt8]? = nil, pairingSecret: [UInt8]? = nil, approvalFailures: [String: Int] = [:], logConfirmed: Int = 0, outbox: [OutboxRecord] = [], owedDeliveries: [OwedDelivery] = [], promotionDeadlines: [String: Date] = [:], relayCursor: Int64 = 0, relayNotes: [RelayNote] = [], dismissedRequests: Set<String> = []) {
        self.account = account
        self.generations = generations
        self.items = items
        self.circleLog = circleLog
        self.enrollment = enrollment
        self.pairingSecret = pairingSecret
        self.approvalFailures = approvalFailures
        self.logConfirmed = logConfirmed
        self.outbox = outbox
        self.owedDeliveries = owedDeliveries
        self.promotionDeadlines = promotionDeadlines
        self.relayCursor = relayCursor
        self.relayNotes = relayNotes
        self.dismissedRequests = dismissedRequests
    }

    public var account: AccountRecord
    public var generations: [KeyGeneration]
    public var items: [StoredItem]
    /// Verified circle log entries, encoded, in order.
    public var circleLog: [[UInt8]] = []
    /// This device's own enrollment request, while it is joining.
    public var enrollment: [UInt8]?
    /// The pairing secret the enrollment request commits to.
    public var pairingSecret: [UInt8]?
    /// Wrong pairing codes, by requesting device.
    public var approvalFailures: [String: Int] = [:]
    /// How many leading circle log entries the relay is known to hold; those
    /// after are this device's own, queued for the relay.
    public var logConfirmed: Int = 0
    /// Records queued for the relay (acknowledgements, challenges, reveals).
    public var outbox: [OutboxRecord] = []
    /// Shares this device still owes the relay.
    public var owedDeliveries: [OwedDelivery] = []
    /// Generations this device announced and will promote, with their deadlines.
    public var promotionDeadlines: [String: Date] = [:]
    /// The last relay cursor this device has read for the account.
    public var relayCursor: Int64 = 0
    /// Relay records kept to rebuild the account's view at start, oldest first.
    public var relayNotes: [RelayNote] = []
    /// Requests to join that a person dismissed here, by device ID.
    public var dismissedRequests: Set<String> = []
    /// This device's reveal has gone out (or is queued): it is published once.
    public var revealed = false
}

/// A relay record this device keeps (docs/FORMAT.md, `relay_notes`): it was
/// verified when it arrived, and is replayed at start instead of re-reading the relay.
public struct RelayNote: Sendable, Equatable {
    public var cursor: Int64
    public var kind: RelayRecord.Kind
    public var body: [UInt8]
    public var seenAt: Date

    public init(cursor: Int64, kind: RelayRecord.Kind, body: [UInt8], seenAt: Date) {
        self.cursor = cursor
        self.kind = kind
        self.body = body
        self.seenAt = seenAt
    }
}

/// Shares of one key that this device owes: to one device, or (recipient "")
/// to every trusted device but itself.
public struct OwedDelivery: Sendable, Hashable {
    public var keyID: String
    public var recipient: String

    public init(keyID: String, recipient: String = "") {
        self.keyID = keyID
        self.recipient = recipient
    }
}

/// A record waiting in the vault for the relay to come back.
public struct OutboxRecord: Sendable, Equatable {
    public var id: Int64
    public var record: RelayRecord
}

/// The key `keys/current` answers: its generation number and its key ID.
public struct CurrentKey: Sendable, Equatable {
    public var generation: Int
    public var keyID: String

    public init(generation: Int, keyID: String) {
        self.generation = generation
        self.keyID = keyID
    }
}

extension AccountRecord {
    public var currentKey: CurrentKey { CurrentKey(generation: currentGeneration, keyID: currentKeyID) }

    public mutating func setCurrent(_ current: CurrentKey) {
        currentGeneration = current.generation
        currentKeyID = current.keyID
    }
}
