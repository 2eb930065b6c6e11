public import FoundationEssentials

/// This device's request to join an account: what a person needs to approve it
/// on a trusted device.
public struct Enrollment: Sendable, Equatable {
    /// This device's ID in the account's circle, as trusted devices list it.
    public var deviceID: DeviceIdentifier
    /// The six digits to type on a trusted device. Key reads on this device
    /// carry it too (`Pending.pairingCode`), until the exchange ends.
    public var pairingCode: String
    /// When the request was made, as the daemon says.
    public var since: Date?
}

extension KeyVaultClient {
    /// Asks to join `account` as a new device, listed on trusted devices as
    /// `deviceName`; `passphrase` protects the account on this device. With a
    /// relay service, `identityToken` is the person's sign-in: an ID token whose
    /// nonce is this device's identity nonce for the account (docs/API.md).
    /// Asking again while the request waits answers the same code; after its
    /// exchange failed (`codeMismatch`), a new request with a new code.
    ///
    /// Throws the daemon's refusal (`Refusal`: the relay knows no such account,
    /// it is already on this device, no sign-in…) or an error reaching it.
    public func enroll(_ account: String, passphrase: String, deviceName: String, identityToken: String? = nil) async throws -> Enrollment {
        var encoded = try JSONEncoder().encode(EnrollRequest(passphrase: passphrase, deviceName: deviceName, identityToken: identityToken))
        var body = [UInt8](encoded)
        // The copies of the passphrase made here are wiped once sent.
        defer {
            encoded.withUnsafeMutableBytes(Wipe.bytes)
            body.withUnsafeMutableBytes(Wipe.bytes)
        }
        let response = try await send("POST", Self.accountPath(account) + "/enroll", body: body)
        switch try Answers.decode(response, Answers.NoFields.self, ready: { _ in () }) {
        case .pending(let pending):
            guard let deviceID = pending.deviceID, let code = pending.pairingCode else {
                throw KeyVaultClientError.malformedAnswer("an enrollment answer without its device ID and pairing code")
            }
            return Enrollment(deviceID: deviceID, pairingCode: code, since: pending.since)
        case .refused(let refusal):
            throw refusal
        case .ready:
            throw KeyVaultClientError.malformedAnswer("an enrollment answered ready, not pending")
        }
    }
}

private struct EnrollRequest: Encodable {
    var passphrase: String
    var deviceName: String
    var identityToken: String?
}
