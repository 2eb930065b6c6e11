import Foundation
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultRelay

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

/// What the relay keeps beside the records: candidacies, and the signer index.
/// Shared by every instance on one store, so the bounds hold across instances.
protocol ServiceState: Sendable {
    /// Files (or refreshes) a candidacy under the bounds below, spending the
    /// request's nonce in the same transaction (`RelayError.nonceSpent`: spent before).
    func file(_ candidate: Candidate, spending nonce: RequestNonce) async throws -> Filing
    /// The account's live candidates.
    func candidates(account: AccountID, now: Int64) async throws -> [Candidate]
    /// The signing key of `keyID` in the account's signer index (a device a stored log entry made a
    /// member, revoked or not), or of its live candidacy; nil: the account knows no such signer, or
    /// there is no such account. One or two statements naming the account, whatever its log holds.
    func signer(_ keyID: DeviceID, account: AccountID, now: Int64) async throws -> KnownSigner?
    /// Adds to the signer index the devices that log entries about to be stored make members. Called
    /// before they are stored: the index then holds every member of every stored log (and perhaps a
    /// device whose batch then failed, which the log itself still refuses).
    func index(_ devices: [DeviceKeys], account: AccountID) async throws
    func shutdown() async
}

/// A signer an account knows, before any of its log is read.
enum KnownSigner: Sendable, Equatable {
    /// In the signer index: for ever (the index only grows), so it may be remembered.
    case indexed(SigningPublicKey)
    /// A live candidacy's: for a day at most, until `until` (milliseconds since the epoch).
    case candidate(SigningPublicKey, until: Int64)

    var key: SigningPublicKey {
        switch self {
        case .indexed(let key), .candidate(let key, _): return key
        }
    }
}

enum Filing: Sendable, Equatable {
    /// With the live candidacies it evicted (an account holds at most `Bounds.liveCandidates`).
    case filed(evicted: [DeviceID])
    /// Seconds until the oldest counted filing leaves the hour.
    case tooMany(retryAfter: Int)
}

/// RELAY.md's bounds on candidacies and nonces.
enum Bounds {
    static let candidateLifeMillis: Int64 = 24 * 3600 * 1000
    static let liveCandidates = 8
    static let filingsPerHour = 60
    static let hourMillis: Int64 = 3600 * 1000

    static func retryAfter(oldestFiling: Int64, now: Int64) -> Int {
        max(1, Int((oldestFiling + hourMillis - now + 999) / 1000))
    }
}
