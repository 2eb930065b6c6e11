import Foundation
package import KeyVaultCrypto
package import KeyVaultProtocol
import KeyVaultAccount

/// The daemon's rules: who may do what to which accounts, and the costs and
/// limits it runs with. Loaded from the TOML files of a policy directory.
package struct Policy: Sendable, Equatable {
    package struct Rule: Sendable, Equatable {
        /// nil: any uid (then `gid` must be set).
        package var uid: UInt32?
        package var gid: UInt32?
        /// Exact IDs, `prefix*`, or `*`.
        package var accounts: [String]
        package var allow: Set<Permission>
        package var source: String

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

    package struct Backoff: Sendable, Equatable {
        /// The delay after the first wrong passphrase; it doubles with each further one.
        package var baseSeconds: Int
        package var maxSeconds: Int
    }

    package var rules: [Rule]
    package var kdf: KDFParameters
    /// The dearest Argon2id cost a recovery kit's header may ask for; nil: `kdf` itself.
    package var kitMaximum: KDFParameters?
    /// What a kit may cost at most: a forged header must not choose the daemon's work.
    package var kitCeiling: KDFParameters { kitMaximum ?? kdf }
    package var maxWaitSeconds: Int
    package var backoff: Backoff
    /// A group whose members may connect: the socket becomes 0660 and owned by it.
    package var socketGroup: UInt32?
    package var rotation = Rotation()
    package var enrollment = Enrollment()

    package struct Enrollment: Sendable, Equatable {
        /// A trusted device answers (challenges, lists, may approve) a request
        /// for this long after it first received it; then it is dropped.
        package var requestLifetimeSeconds = 3600
    }

    package struct Rotation: Sendable, Equatable {
        /// Revoking a device rotates at once and promotes at once.
        package var rotateOnRevoke = true
        /// A new generation becomes current when every trusted device holds it, or after this long.
        package var promotionDeadlineSeconds = 86_400
        /// Rotate automatically once the current key is this old; 0 turns it off.
        package var maxKeyAgeSeconds = 0
    }

    /// What the daemon runs with when no policy directory exists: the same as
    /// the shipped `policy/default.toml` (a test holds the two equal).
    package static func builtInDefault(selfUID: UInt32) -> Policy {
        Policy(
            rules: [Rule(uid: selfUID, gid: nil, accounts: ["*"], allow: Set(Permission.allCases), source: "built-in default")],
            kdf: .moderate, maxWaitSeconds: 300, backoff: Backoff(baseSeconds: 1, maxSeconds: 900), socketGroup: nil)
    }

    /// Whether any rule grants the caller anything at all (else its connections take no place).
    package func grantsAnything(to peer: PeerCredentials) -> Bool {
        rules.contains { $0.matches(peer) && !$0.allow.isEmpty }
    }

    /// Allowed if any rule that matches the caller grants the permission for the account.
    package func allows(_ peer: PeerCredentials, _ permission: Permission, account: AccountID?) -> Bool {
        rules.contains { $0.matches(peer) && $0.allow.contains(permission) && $0.covers(account) }
    }
}

extension Policy: CustomStringConvertible {
    package var description: String {
        "\(rules.count) rule(s), KDF \(kdf.opsLimit) passes over \(kdf.memLimitBytes / 1_048_576) MiB, wait up to \(maxWaitSeconds)s"
    }
}
