import Foundation
import KeyVaultCrypto
import KeyVaultProtocol

/// A device that proved it acts for an account's identity, for 24 hours.
struct Candidate: Sendable, Equatable {
    var account: AccountID
    var signing: SigningPublicKey
    var box: BoxPublicKey
    /// Milliseconds since the epoch.
    var filedAt: Int64

    var deviceID: DeviceID { Candidate.deviceID(signing: signing, box: box) }

    static func deviceID(signing: SigningPublicKey, box: BoxPublicKey) -> DeviceID {
        // The device ID covers the two keys only; the name is not part of it.
        DeviceKeys(signing: signing, box: box, name: "").deviceID
    }
}

/// What the relay keeps beside the records: replay nonces and candidacies.
/// Shared by every instance on one store, so a nonce accepted by one is
/// refused by the others, and the bounds hold across instances.
protocol ServiceState: Sendable {
    /// Records `(keyID, nonce)`; false when it was accepted before (within the window).
    func claim(nonce: String, keyID: DeviceID, created: Int64) async throws -> Bool
    /// Files (or refreshes) a candidacy under the bounds below.
    func file(_ candidate: Candidate) async throws -> Filing
    /// The account's live candidates.
    func candidates(account: AccountID, now: Int64) async throws -> [Candidate]
    func shutdown() async
}

enum Filing: Sendable, Equatable {
    case filed
    /// Seconds until the oldest counted filing leaves the hour.
    case tooMany(retryAfter: Int)
}

/// RELAY.md's bounds on candidacies and nonces.
enum Bounds {
    static let candidateLifeMillis: Int64 = 24 * 3600 * 1000
    static let liveCandidates = 8
    static let filingsPerHour = 60
    static let hourMillis: Int64 = 3600 * 1000
    /// A nonce is kept while a request carrying it could still be in the window.
    static let nonceLife: Int64 = 2 * RequestSignature.window

    static func retryAfter(oldestFiling: Int64, now: Int64) -> Int {
        max(1, Int((oldestFiling + hourMillis - now + 999) / 1000))
    }
}
