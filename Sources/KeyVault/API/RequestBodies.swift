import Foundation
import Hummingbird
import KeyVaultProtocol
import KeyVaultAccount
import KeyVaultEngine
import KeyVaultPolicy

/// The JSON bodies the API takes. Decoding failures become `invalid` with a
/// sentence that names the expected shape, never the received values.
/// The bodies that carry passphrases are read by `SecretBody`, never by a
/// Foundation decoder: each names its fields and its shape.
struct CreateAccountBody {
    static let shape = #"{"user": string, "passphrase": string, "accessibility": "whenUnlocked" | "afterFirstUnlock" (optional), "deviceName": string (optional), "identityToken": string (with a relay service)}"#
    static func read(_ request: Request, _ context: VaultRequestContext) async throws -> SecretBody {
        try await SecretBody.read(request, context: context, shape: shape, secrets: ["passphrase"],
                                  strings: ["user", "accessibility", "deviceName", "identityToken"])
    }
}

struct PassphraseBody {
    static let shape = #"{"passphrase": string}"#
    static func read(_ request: Request, _ context: VaultRequestContext) async throws -> SecretBody {
        try await SecretBody.read(request, context: context, shape: shape, secrets: ["passphrase"], strings: [])
    }
}

struct ChangePassphraseBody {
    static let shape = #"{"old": string, "new": string}"#
    static func read(_ request: Request, _ context: VaultRequestContext) async throws -> SecretBody {
        try await SecretBody.read(request, context: context, shape: shape, secrets: ["old", "new"], strings: [])
    }
}

struct EnrollBody {
    static let shape = #"{"passphrase": string, "deviceName": string, "identityToken": string (with a relay service)}"#
    static func read(_ request: Request, _ context: VaultRequestContext) async throws -> SecretBody {
        try await SecretBody.read(request, context: context, shape: shape, secrets: ["passphrase"], strings: ["deviceName", "identityToken"])
    }
}

struct RecoveryKitBody {
    static let shape = #"{"kitPassphrase": string}"#
    static func read(_ request: Request, _ context: VaultRequestContext) async throws -> SecretBody {
        try await SecretBody.read(request, context: context, shape: shape, secrets: ["kitPassphrase"], strings: [])
    }
}

struct ImportBody {
    static let shape = #"{"kit": base64, "kitPassphrase": string, "passphrase": string, "deviceName": string (optional)}"#
    static func read(_ request: Request, _ context: VaultRequestContext) async throws -> SecretBody {
        try await SecretBody.read(request, context: context, shape: shape, secrets: ["kitPassphrase", "passphrase"], strings: ["kit", "deviceName"])
    }
}

struct RotateBody: Decodable {
    var promote: String?
    static let shape = #"{"promote": "after-acks" | "now" (optional)}"#
}

struct FoundBody: Decodable {
    var identityToken: String?
    static let shape = #"{"identityToken": string (optional; a relay service needs it)}"#
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
        } catch let refusal as Refusal {
            // A field the body's own decoding refused, with its own sentence.
            throw refusal
        } catch {
            throw Refusal.invalid("the body must be a JSON object: \(shape)")
        }
    }

    static func deviceName(_ text: String?) throws -> String {
        let name = text ?? "first device"
        guard !name.isEmpty, name.utf8.count <= 128, !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw Refusal.invalid("'deviceName' must be 1 to 128 bytes of printable text")
        }
        return name
    }

}

struct SealBody: Decodable {
    struct Item: Decodable {
        var plaintext: String
        var aad: String?
    }
    var items: [Item]
    /// Parsed with the body, once: a value that is not a key ID is refused with its own sentence.
    var keyId: KeyID?
    static let shape = #"{"items": [{"plaintext": base64, "aad": base64 (optional)}, ...], "keyId": string (optional)}"#

    private enum CodingKeys: String, CodingKey { case items, keyId }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        items = try container.decode([Item].self, forKey: .items)
        keyId = try container.decodeIfPresent(String.self, forKey: .keyId).map { text in
            guard let id = KeyID(hex: text) else { throw Refusal.invalid("'keyId' must be 32 lowercase hex characters") }
            return id
        }
    }
}

struct OpenBody: Decodable {
    struct Item: Decodable {
        var envelope: String
        var aad: String?
    }
    var items: [Item]
    static let shape = #"{"items": [{"envelope": base64, "aad": base64 (optional)}, ...]}"#
}
