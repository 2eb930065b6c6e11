import Foundation
package import KeyVaultCrypto
package import KeyVaultProtocol

/// What a wrapped secret is bound to: its account, its kind and its generation.
/// The AAD makes a blob useless in any other slot (docs/FORMAT.md, "Wrapping").
package struct WrapContext: Sendable, Equatable {
    package var account: AccountID
    package var kind: ItemKind
    package var generation: Int

    package init(account: AccountID, kind: ItemKind, generation: Int) {
        self.account = account
        self.kind = kind
        self.generation = generation
    }

    /// `"keyvault/v1/wrap" || 0x00 || len32(account) || account || len32(kind) || kind || u64be(generation)`
    package var aad: [UInt8] {
        var out = Array(Labels.wrap.utf8) + [0]
        for part in [Array(account.rawValue.utf8), Array(kind.rawValue.utf8)] {
            out += LabeledHash.lengthPrefix(part.count)
            out += part
        }
        let g = UInt64(generation)
        for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8((g >> UInt64(shift)) & 0xff)) }
        return out
    }
}

/// The at-rest envelope: `version (0x01) || nonce (24) || ciphertext || tag (16)`.
package enum WrappedSecret {
    package static let version: UInt8 = 1

    package static func wrap(_ secret: SecureBytes, under kek: SecretKey, context: WrapContext) -> [UInt8] {
        [version] + WrapCipher.seal(secret, key: kek, aad: context.aad)
    }

    /// Only for the documented worked example and its test.
    package static func wrap(_ secret: SecureBytes, under kek: SecretKey, context: WrapContext, nonce: [UInt8]) -> [UInt8] {
        [version] + WrapCipher.seal(secret, key: kek, aad: context.aad, nonce: nonce)
    }

    package static func unwrap(_ blob: [UInt8], under kek: SecretKey, context: WrapContext) throws -> SecureBytes {
        guard let first = blob.first, first == version else { throw VaultError.unsupportedWrapVersion }
        return try WrapCipher.open(Array(blob.dropFirst()), key: kek, aad: context.aad)
    }
}
