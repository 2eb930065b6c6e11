// Fuzz target `secret_body`: the JSON request bodies a local caller sends the
// daemon's socket API. The bodies that carry passphrases are read by
// `SecretBody` (Sources/KeyVault/API/SecretBody.swift), a JSON reader of the
// daemon's own; the others by Foundation's JSONDecoder into the types of
// Sources/KeyVault/API/RequestBodies.swift.
//
// Input: `u8 mode`, then the body. Modes (mode % 4): 0 create-account's fields,
// 1 import's, 2 change-passphrase's (each read by `SecretBody`, and what it
// read compared with Foundation's JSONSerialization reading the same body),
// 3 the Decodable bodies (seal, open, rotate, found, approve) and `deviceName`.
import Foundation
import KeyVaultCrypto
import KeyVaultAccount
@testable import KeyVault
import FuzzSupport

let fieldSets: [(secrets: Set<String>, strings: Set<String>)] = [
    (["passphrase"], ["user", "accessibility", "deviceName", "identityToken"]),
    (["kitPassphrase", "passphrase"], ["kit", "deviceName"]),
    (["old", "new"], []),
]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let mode = Int(input.u8() % 4)
    let body = input.rest()
    guard mode < 3 else {
        let data = Data(body)
        _ = try? JSONDecoder().decode(SealBody.self, from: data)
        _ = try? JSONDecoder().decode(OpenBody.self, from: data)
        _ = try? JSONDecoder().decode(RotateBody.self, from: data)
        _ = try? JSONDecoder().decode(FoundBody.self, from: data)
        if let approve = try? JSONDecoder().decode(ApproveBody.self, from: data) {
            _ = try? RequestBody.deviceName(approve.pairingCode)
        }
        return 0
    }
    let fields = fieldSets[mode]
    guard let parsed = try? body.withUnsafeBytes({ try SecretBody.parse($0, shape: "fuzz", secrets: fields.secrets, strings: fields.strings) }) else {
        return 0
    }
    // What SecretBody read is what a JSON parser reads: the same text for every field it keeps.
    let reference = (try? JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed])) as? [String: Any]
    for name in fields.secrets {
        guard let secret = try? parsed.secret(name) else { continue }
        precondition(secret.count <= SecretBody.maxSecretBytes)
        if let reference, let text = reference[name] as? String {
            let mine = secret.withUnsafeBytes { Array($0) }
            precondition(mine == Array(text.utf8), "SecretBody read field '\(name)' otherwise than JSONSerialization")
        }
    }
    for name in fields.strings {
        guard let value = parsed.optional(name) else { continue }
        if let reference, let text = reference[name] as? String {
            precondition(value == text, "SecretBody read field '\(name)' otherwise than JSONSerialization")
        }
        _ = try? RequestBody.deviceName(value)
    }
    return 0
}
