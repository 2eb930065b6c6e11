package import FoundationEssentials
import KeyVaultCrypto

/// One of an account's keys: 32 random bytes known by generation number and
/// key ID. This is the metadata; the bytes live in the vault, wrapped.
package struct KeyGeneration: Sendable, Equatable {
    package var number: Generation
    /// A labelled hash of the key.
    package var keyID: KeyID
    package var createdAt: Date
    package var state: State

    package enum State: String, Sendable, Codable {
        /// Usable; the highest active generation is the current one.
        case active
        /// Crypto-shredded: the key is gone on purpose.
        case destroyed
    }

    package init(number: Generation, keyID: KeyID, createdAt: Date, state: State) {
        self.number = number
        self.keyID = keyID
        self.createdAt = createdAt
        self.state = state
    }

    /// The order every device agrees on: generation number, then key ID (two
    /// devices that rotated while apart announce the same number).
    package func precedes(_ other: KeyGeneration) -> Bool {
        (number, keyID) < (other.number, other.keyID)
    }
}

/// Which key a read asks for.
package enum KeySelector: Sendable, Equatable {
    case current
    case generation(Generation)
    case keyID(KeyID)
}
