import KeyVaultCrypto

/// Pairing version 2 (docs/PAIRING.md): the six-digit code is CPace's
/// password. The new device is the initiator, the trusted device that
/// approves is the responder; the relay carries the exchange and can test no
/// guess offline.
package enum Pairing {
    /// The largest multiple of 10⁶ below 2³²: draws at or above it are
    /// redrawn, so every code is equally likely.
    static let drawLimit: UInt32 = 4_294_000_000

    /// The code a draw of 4 bytes gives, or nil when the draw is redrawn.
    package static func code(fromDraw bytes: [UInt8]) -> String? {
        precondition(bytes.count == 4)
        let n = bytes.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard n < drawLimit else { return nil }
        let digits = String(n % 1_000_000)
        return String(repeating: "0", count: 6 - digits.count) + digits
    }

    /// A fresh code from the CSPRNG.
    package static func drawCode() -> String {
        while true {
            if let code = code(fromDraw: Random.bytes(4)) { return code }
        }
    }

    /// Whether `text` has the code's shape: exactly six ASCII digits.
    package static func isCode(_ text: String) -> Bool {
        text.utf8.count == 6 && text.utf8.allSatisfy { (0x30...0x39).contains($0) }
    }

    /// CPace's inputs for one request: PRS the code, CI the account and the new
    /// device's keys, sid the request's session.
    static func inputs(code: String, account: AccountID, device: DeviceKeys, session: [UInt8]) -> CPace.Inputs {
        CPace.Inputs(password: SecureBytes(copying: Array(code.utf8)), channelID: channelID(account: account, device: device),
                     sessionID: session)
    }

    package static func channelID(account: AccountID, device: DeviceKeys) -> [UInt8] {
        var w = FieldWriter()
        w.string(Labels.pairingChannel)
        w.string(account.rawValue)
        w.bytes(device.signing.rawRepresentation)
        w.bytes(device.box.rawRepresentation)
        return w.bytes
    }

    package static func initiatorData(deviceID: DeviceID) -> [UInt8] {
        var w = FieldWriter()
        w.string(Labels.pairingInitiator)
        w.string(deviceID.hex)
        return w.bytes
    }

    static func responderData(responder: DeviceID, genesisHash: LogHash, headHash: LogHash, headSeq: LogSeq) -> [UInt8] {
        var w = FieldWriter()
        w.string(Labels.pairingResponder)
        w.string(responder.hex)
        w.hash(genesisHash)
        w.hash(headHash)
        w.u64(headSeq.value)
        return w.bytes
    }
}
