import KeyVaultCrypto
/// What `GET /v1/accounts/{user}/events` streams.
package struct AccountEvent: Sendable, Equatable {
    package init(name: String, fields: [String: String]) {
        self.name = name
        self.fields = fields
    }

    package var name: String
    package var fields: [String: String]

    package static func keyReady(_ generation: Int, _ keyID: String) -> AccountEvent {
        AccountEvent(name: "key-ready", fields: ["generation": String(generation), "keyId": keyID])
    }
    package static func deviceEnrolled(_ deviceID: String) -> AccountEvent { AccountEvent(name: "device-enrolled", fields: ["deviceId": deviceID]) }
    package static func rotated(_ generation: Int, _ keyID: String) -> AccountEvent {
        AccountEvent(name: "rotated", fields: ["generation": String(generation), "keyId": keyID])
    }
    package static func deviceRevoked(_ deviceID: String) -> AccountEvent { AccountEvent(name: "device-revoked", fields: ["deviceId": deviceID]) }
    /// A pairing exchange ended without an approval (docs/PAIRING.md): on the new device, and on
    /// the trusted device that ran it. `reason`: `code-mismatch`, `other-circle` or `no-answer`.
    /// The new device shows a new code when it enrolls again.
    package static func pairingFailed(_ deviceID: String, reason: String) -> AccountEvent {
        AccountEvent(name: "pairing-failed", fields: ["deviceId": deviceID, "reason": reason])
    }
    package static let locked = AccountEvent(name: "locked", fields: [:])
    package static let unlocked = AccountEvent(name: "unlocked", fields: [:])
}
