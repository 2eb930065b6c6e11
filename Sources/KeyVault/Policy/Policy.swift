import Foundation
public import KeyVaultCrypto
public import KeyVaultProtocol
import KeyVaultStore

/// The daemon's rules: who may do what to which accounts, and the costs and
/// limits it runs with. Loaded from the TOML files of a policy directory.
public struct Policy: Sendable, Equatable {
    public struct Rule: Sendable, Equatable {
        /// nil: any uid (then `gid` must be set).
        public var uid: UInt32?
        public var gid: UInt32?
        /// Exact IDs, `prefix*`, or `*`.
        public var accounts: [String]
        public var allow: Set<Permission>
        public var source: String

        func matches(_ peer: PeerCredentials) -> Bool {
            (uid.map { $0 == peer.uid } ?? true) && (gid.map { $0 == peer.gid } ?? true)
        }

        func covers(_ account: AccountID?) -> Bool {
            guard let account else { return true }
            return accounts.contains { pattern in
                if pattern == "*" { return true }
                if pattern.hasSuffix("*") { return account.rawValue.hasPrefix(pattern.dropLast()) }
                return pattern == account.rawValue
            }
        }
    }

    public struct Backoff: Sendable, Equatable {
        /// The delay after the first wrong passphrase; it doubles with each further one.
        public var baseSeconds: Int
        public var maxSeconds: Int
    }

    public var rules: [Rule]
    public var kdf: KDFParameters
    /// The dearest Argon2id cost a recovery kit's header may ask for; nil: `kdf` itself.
    public var kitMaximum: KDFParameters?
    /// What a kit may cost at most: a forged header must not choose the daemon's work.
    public var kitCeiling: KDFParameters { kitMaximum ?? kdf }
    public var maxWaitSeconds: Int
    public var backoff: Backoff
    /// A group whose members may connect: the socket becomes 0660 and owned by it.
    public var socketGroup: UInt32?
    public var rotation = Rotation()
    public var enrollment = Enrollment()

    public struct Enrollment: Sendable, Equatable {
        /// A trusted device answers (challenges, lists, may approve) a request
        /// for this long after it first received it; then it is dropped.
        public var requestLifetimeSeconds = 3600
    }

    public struct Rotation: Sendable, Equatable {
        /// Revoking a device rotates at once and promotes at once.
        public var rotateOnRevoke = true
        /// A new generation becomes current when every trusted device holds it, or after this long.
        public var promotionDeadlineSeconds = 86_400
        /// Rotate automatically once the current key is this old; 0 turns it off.
        public var maxKeyAgeSeconds = 0
    }

    /// What the daemon runs with when no policy directory exists: the same as
    /// the shipped `policy/default.toml` (a test holds the two equal).
    public static func builtInDefault(selfUID: UInt32) -> Policy {
        Policy(
            rules: [Rule(uid: selfUID, gid: nil, accounts: ["*"], allow: Set(Permission.allCases), source: "built-in default")],
            kdf: .moderate, maxWaitSeconds: 300, backoff: Backoff(baseSeconds: 1, maxSeconds: 900), socketGroup: nil)
    }

    /// Whether any rule grants the caller anything at all (else its connections take no place).
    public func grantsAnything(to peer: PeerCredentials) -> Bool {
        rules.contains { $0.matches(peer) && !$0.allow.isEmpty }
    }

    /// Allowed if any rule that matches the caller grants the permission for the account.
    public func allows(_ peer: PeerCredentials, _ permission: Permission, account: AccountID?) -> Bool {
        rules.contains { $0.matches(peer) && $0.allow.contains(permission) && $0.covers(account) }
    }
}

extension Policy: CustomStringConvertible {
    public var description: String {
        "\(rules.count) rule(s), KDF \(kdf.opsLimit) passes over \(kdf.memLimitBytes / 1_048_576) MiB, wait up to \(maxWaitSeconds)s"
    }
}
