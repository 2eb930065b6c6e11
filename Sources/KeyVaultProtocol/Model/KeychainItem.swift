package import FoundationEssentials
import KeyVaultCrypto

/// When an item may be read, as on Apple's platforms.
package enum Accessibility: String, Sendable, Codable, CaseIterable {
    /// Readable only while the account is unlocked (the default).
    case whenUnlocked
    /// Readable from the first unlock until the daemon stops, even when locked,
    /// so a background sync engine keeps working.
    case afterFirstUnlock
}

/// What a stored secret is. Part of each secret's AAD.
package enum ItemKind: String, Sendable, Codable, CaseIterable {
    /// One of the account's 32-byte key generations.
    case generationKey = "generation-key"
    /// This device's Ed25519 seed for the account.
    case deviceSigningKey = "device-signing-key"
    /// This device's X25519 secret key for the account.
    case deviceBoxKey = "device-box-key"
    /// A joining device's pairing key (the CPace exchange's ISK), kept in the
    /// enrollment row until its approval is authenticated; never an item.
    case pairingKey = "pairing-key"
}

/// A synchronizable keychain item's attributes: everything about a secret
/// except the secret, which the vault stores only wrapped.
package struct KeychainItem: Sendable, Equatable, Codable {
    package init(itemClass: String, service: String, account: String, accessGroup: String, label: String, kind: ItemKind, generation: Int, keyID: KeyID?, synchronizable: Bool, accessibility: Accessibility, creationDate: Date, modificationDate: Date) {
        self.itemClass = itemClass
        self.service = service
        self.account = account
        self.accessGroup = accessGroup
        self.label = label
        self.kind = kind
        self.generation = generation
        self.keyID = keyID
        self.synchronizable = synchronizable
        self.accessibility = accessibility
        self.creationDate = creationDate
        self.modificationDate = modificationDate
    }

    /// Apple's `kSecClass`: generic passwords carry opaque secrets.
    package var itemClass: String
    package var service: String
    package var account: String
    package var accessGroup: String
    package var label: String
    package var kind: ItemKind
    /// 0 for device identity items.
    package var generation: Int
    /// A generation key's key ID (nil for device identity items): two keys may
    /// share a generation number after concurrent rotations, never a key ID.
    package var keyID: KeyID?
    package var synchronizable: Bool
    package var accessibility: Accessibility
    package var creationDate: Date
    package var modificationDate: Date

    package static let service = "keyvaultd"
    package static let accessGroup = "keyvaultd.keys"

    package static func make(account: AccountID, kind: ItemKind, generation: Int, keyID: KeyID? = nil, accessibility: Accessibility, at date: Date) -> KeychainItem {
        let label: String
        switch kind {
        case .generationKey: label = "\(account) key generation \(generation)"
        case .deviceSigningKey: label = "\(account) device signing key"
        case .deviceBoxKey: label = "\(account) device box key"
        case .pairingKey: label = "\(account) pairing key"
        }
        return KeychainItem(
            itemClass: "genp", service: service, account: account.rawValue, accessGroup: accessGroup,
            label: label, kind: kind, generation: generation, keyID: keyID,
            // Generation keys travel to the account's other devices; a device's own identity never does.
            synchronizable: kind == .generationKey,
            accessibility: accessibility, creationDate: date, modificationDate: date)
    }
}
