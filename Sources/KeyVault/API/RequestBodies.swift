import Foundation
import Hummingbird
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultStore

/// The JSON bodies the API takes. Decoding failures become `invalid` with a
/// sentence that names the expected shape, never the received values.
struct CreateAccountBody: Decodable {
    var user: String
    var passphrase: String
    var accessibility: String?
    var deviceName: String?
    var identityToken: String?
    static let shape = #"{"user": string, "passphrase": string, "accessibility": "whenUnlocked" | "afterFirstUnlock" (optional), "deviceName": string (optional), "identityToken": string (with a relay service)}"#
}

struct PassphraseBody: Decodable {
    var passphrase: String
    static let shape = #"{"passphrase": string}"#
}

struct ChangePassphraseBody: Decodable {
    var old: String
    var new: String
    static let shape = #"{"old": string, "new": string}"#
}

struct EnrollBody: Decodable {
    var passphrase: String
    var deviceName: String
    var identityToken: String?
    static let shape = #"{"passphrase": string, "deviceName": string, "identityToken": string (with a relay service)}"#
}

struct RecoveryKitBody: Decodable {
    var kitPassphrase: String
    static let shape = #"{"kitPassphrase": string}"#
}

struct ImportBody: Decodable {
    var kit: String
    var kitPassphrase: String
    var passphrase: String
    var deviceName: String?
    static let shape = #"{"kit": base64, "kitPassphrase": string, "passphrase": string, "deviceName": string (optional)}"#
}

struct RotateBody: Decodable {
    var promote: String?
    static let shape = #"{"promote": "after-acks" | "now" (optional)}"#
}

struct ApproveBody: Decodable {
    var pairingCode: String
    static let shape = #"{"pairingCode": string}"#
}

enum RequestBody {
    static func decode<T: Decodable>(_ type: T.Type, shape: String, from request: Request, context: VaultRequestContext) async throws -> T {
        let buffer = try await request.body.collect(upTo: context.maxUploadSize)
        do {
            return try JSONDecoder().decode(T.self, from: Data(buffer: buffer))
        } catch {
            throw Refusal.invalid("the body must be a JSON object: \(shape)")
        }
    }

    /// Passphrases enter secure memory at once; the decoded String is the one
    /// copy outside it, dropped when the request ends.
    static func deviceName(_ text: String?) throws -> String {
        let name = text ?? "first device"
        guard !name.isEmpty, name.utf8.count <= 128, !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw Refusal.invalid("'deviceName' must be 1 to 128 bytes of printable text")
        }
        return name
    }

    static func passphrase(_ text: String, field: String) throws -> SecureBytes {
        let utf8 = text.utf8
        guard !utf8.isEmpty else { throw Refusal.invalid("'\(field)' is empty") }
        guard utf8.count <= 1024 else { throw Refusal.invalid("'\(field)' is longer than 1024 bytes") }
        return SecureBytes(copying: utf8)
    }
}

struct SealBody: Decodable {
    struct Item: Decodable {
        var plaintext: String
        var aad: String?
    }
    var items: [Item]
    var keyId: String?
    static let shape = #"{"items": [{"plaintext": base64, "aad": base64 (optional)}, ...], "keyId": string (optional)}"#
}

struct OpenBody: Decodable {
    struct Item: Decodable {
        var envelope: String
        var aad: String?
    }
    var items: [Item]
    static let shape = #"{"items": [{"envelope": base64, "aad": base64 (optional)}, ...]}"#
}
