import Foundation
package import KeyVaultProtocol

/// What `GET /v1/accounts/{user}/events` streams.
package struct AccountEvent: Sendable, Equatable {
    package init(name: String, fields: [String: String], numbers: [String: Int] = [:]) {
        self.name = name
        self.fields = fields
        self.numbers = numbers
    }

    package var name: String
    package var fields: [String: String]
    /// Fields that are numbers in the JSON, as a generation is everywhere else in the API.
    package var numbers: [String: Int]

    package static func keyReady(_ generation: Generation, _ keyID: KeyID) -> AccountEvent {
        AccountEvent(name: "key-ready", fields: ["keyId": keyID.hex], numbers: ["generation": generation.value])
    }
    package static func deviceEnrolled(_ deviceID: DeviceID) -> AccountEvent { AccountEvent(name: "device-enrolled", fields: ["deviceId": deviceID.hex]) }
    package static func rotated(_ generation: Generation, _ keyID: KeyID) -> AccountEvent {
        AccountEvent(name: "rotated", fields: ["keyId": keyID.hex], numbers: ["generation": generation.value])
    }
    package static func deviceRevoked(_ deviceID: DeviceID) -> AccountEvent { AccountEvent(name: "device-revoked", fields: ["deviceId": deviceID.hex]) }
    /// A pairing exchange ended without an approval (docs/PAIRING.md): on the new device, and on
    /// the trusted device that ran it. `reason`: `code-mismatch`, `other-circle`, `no-answer` or
    /// `answered-elsewhere` (the new device answered another response to its request).
    /// The new device shows a new code when it enrolls again.
    package static func pairingFailed(_ deviceID: DeviceID, reason: String) -> AccountEvent {
        AccountEvent(name: "pairing-failed", fields: ["deviceId": deviceID.hex, "reason": reason])
    }
    package static let locked = AccountEvent(name: "locked", fields: [:])
    package static let unlocked = AccountEvent(name: "unlocked", fields: [:])
}
