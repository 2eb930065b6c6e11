import KeyVaultCrypto
/// Device IDs and key IDs: 16 bytes as 32 lowercase hex characters.
package enum HexID {
    package static func isValid(_ text: String) -> Bool {
        text.utf8.count == 32 && text.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }
    }
}
