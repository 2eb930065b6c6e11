package import Foundation
package import KeyVaultCrypto
package import KeyVaultProtocol

/// An account's row: public facts and the KDF's salt and cost.
package struct AccountRecord: Sendable, Equatable {
    package init(id: AccountID, createdAt: Date, kdf: KDFParameters, salt: [UInt8], accessibility: Accessibility, deviceID: DeviceID, signingPublicKey: SigningPublicKey, boxPublicKey: BoxPublicKey, currentGeneration: Generation?, failedUnlocks: Int, backoffUntil: Date, deviceName: String = "", currentKeyID: KeyID? = nil) {
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

    package var id: AccountID
    package var createdAt: Date
    package var kdf: KDFParameters
    package var salt: [UInt8]
    package var accessibility: Accessibility
    package var deviceID: DeviceID
    package var signingPublicKey: SigningPublicKey
    package var boxPublicKey: BoxPublicKey
    /// The current key's generation as the vault last wrote it; nil before the account holds one.
    package var currentGeneration: Generation?
    package var failedUnlocks: Int
    package var backoffUntil: Date
    package var deviceName: String = ""
    /// The current key's ID (none before the first key; vaults before v5 have none).
    package var currentKeyID: KeyID?
}

/// A keychain item as stored: its attributes and its wrapped bytes.
package struct StoredItem: Sendable, Equatable {
    package init(attributes: KeychainItem, wrapped: [UInt8]) {
        self.attributes = attributes
        self.wrapped = wrapped
    }

    package var attributes: KeychainItem
    package var wrapped: [UInt8]

    /// Which secret this is: unique per account.
    package var slot: ItemSlot { ItemSlot(kind: attributes.kind, generation: attributes.generation, keyID: attributes.keyID) }

    package var context: WrapContext {
        // The account string was validated when the item was written.
        WrapContext(account: try! AccountID(validating: attributes.account), kind: attributes.kind, generation: attributes.generation)
    }
}

/// An item's place in an account: its kind, generation number and key ID.
package struct ItemSlot: Sendable, Hashable {
    package var kind: ItemKind
    package var generation: Int
    /// nil for the device's identity items.
    package var keyID: KeyID?
}

/// Everything the vault holds about one account.
package struct AccountSnapshot: Sendable {
    package init(account: AccountRecord, generations: [KeyGeneration], items: [StoredItem], circleLog: [[UInt8]] = [], enrollment: [UInt8]? = nil, pairingSecret: [UInt8]? = nil, approvalFailures: [DeviceID: Int] = [:], logConfirmed: Int = 0, outbox: [OutboxRecord] = [], owedDeliveries: [OwedDelivery] = [], promotionDeadlines: [KeyID: Date] = [:], relayCursor: RelayCursor = .start, relayNotes: [RelayNote] = [], dismissedRequests: Set<DeviceID> = []) {
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

    package var account: AccountRecord
    package var generations: [KeyGeneration]
    package var items: [StoredItem]
    /// Verified circle log entries, encoded, in order.
    package var circleLog: [[UInt8]] = []
    /// This device's own enrollment request, while it is joining.
    package var enrollment: [UInt8]?
    /// The pairing secret the enrollment request commits to.
    package var pairingSecret: [UInt8]?
    /// Wrong pairing codes, by requesting device.
    package var approvalFailures: [DeviceID: Int] = [:]
    /// How many leading circle log entries the relay is known to hold; those
    /// after are this device's own, queued for the relay.
    package var logConfirmed: Int = 0
    /// Records queued for the relay (acknowledgements, challenges, reveals).
    package var outbox: [OutboxRecord] = []
    /// Shares this device still owes the relay.
    package var owedDeliveries: [OwedDelivery] = []
    /// Generations this device announced and will promote, with their deadlines.
    package var promotionDeadlines: [KeyID: Date] = [:]
    /// The last relay cursor this device has read for the account.
    package var relayCursor: RelayCursor = .start
    /// Relay records kept to rebuild the account's view at start, oldest first.
    package var relayNotes: [RelayNote] = []
    /// Requests to join that a person dismissed here, by device ID.
    package var dismissedRequests: Set<DeviceID> = []
    /// This device's reveal has gone out (or is queued): it is published once.
    package var revealed = false
}

/// A relay record this device keeps (docs/FORMAT.md, `relay_notes`): it was
/// verified when it arrived, and is replayed at start instead of re-reading the relay.
package struct RelayNote: Sendable, Equatable {
    package var cursor: RelayCursor
    package var kind: RelayRecord.Kind
    package var body: [UInt8]
    package var seenAt: Date

    package init(cursor: RelayCursor, kind: RelayRecord.Kind, body: [UInt8], seenAt: Date) {
        self.cursor = cursor
        self.kind = kind
        self.body = body
        self.seenAt = seenAt
    }
}

/// Shares of one key that this device owes: to one device, or (no recipient)
/// to every device the circle trusts but this one.
package struct OwedDelivery: Sendable, Hashable {
    package var keyID: KeyID
    package var recipient: DeviceID?

    package init(keyID: KeyID, recipient: DeviceID? = nil) {
        self.keyID = keyID
        self.recipient = recipient
    }
}

/// A record waiting in the vault for the relay to come back.
package struct OutboxRecord: Sendable, Equatable {
    package var id: Int64
    package var record: RelayRecord

    package init(id: Int64, record: RelayRecord) {
        self.id = id
        self.record = record
    }
}

/// The key `keys/current` answers: its generation number and its key ID.
package struct CurrentKey: Sendable, Equatable {
    package var generation: Generation?
    package var keyID: KeyID?

    package init(generation: Generation?, keyID: KeyID?) {
        self.generation = generation
        self.keyID = keyID
    }
}

extension AccountRecord {
    package var currentKey: CurrentKey { CurrentKey(generation: currentGeneration, keyID: currentKeyID) }

    package mutating func setCurrent(_ current: CurrentKey) {
        currentGeneration = current.generation
        currentKeyID = current.keyID
    }
}
