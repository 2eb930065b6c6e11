/// What the crypto layer throws. Messages name the failure, never a value.
package enum CryptoError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Bytes entering a sized type had the wrong length.
    case wrongSize(what: String, expected: Int, actual: Int)
    /// Authentication failed: wrong key, wrong AAD, or tampered bytes.
    case authenticationFailed
    /// A signature did not verify.
    case badSignature
    /// The KDF refused its parameters or could not allocate its memory.
    case kdfFailed
    /// KDF parameters outside what libsodium accepts.
    case invalidKDFParameters(String)
    /// OpenSSL reported an error.
    case openSSL(String)

    package var description: String {
        switch self {
        case .wrongSize(let what, let expected, let actual):
            return "\(what) must be \(expected) bytes, got \(actual)"
        case .authenticationFailed: return "authentication failed"
        case .badSignature: return "signature did not verify"
        case .kdfFailed: return "the key derivation failed (out of memory?)"
        case .invalidKDFParameters(let why): return "invalid KDF parameters: \(why)"
        case .openSSL(let what): return "OpenSSL error: \(what)"
        }
    }
}
