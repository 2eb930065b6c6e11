// Fuzz target `policy_toml`: the daemon's policy files (docs/POLICY.md), through
// its strict TOML parser (Sources/KeyVaultPolicy/TOMLParser.swift) and the
// builder that checks every table, name and number (PolicyLoader.swift).
//
// Input: the text of one policy file.
import KeyVaultPolicy
import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    // The daemon reads a file as UTF-8 text, or refuses it.
    guard let text = String(validating: bytes, as: UTF8.self) else { return 0 }
    let lines = bytes.lazy.filter { $0 == 0x0A }.count + 1
    do {
        let policy = try PolicyLoader.parse(text, file: "fuzz.toml", selfUID: 1000)
        _ = policy.description
        _ = policy.kitCeiling
        let peer = PeerCredentials(uid: 1000, gid: 1000, pid: 1)
        _ = policy.grantsAnything(to: peer)
        for permission in Permission.allCases { _ = policy.allows(peer, permission, account: nil) }
    } catch {
        // An error points at a line of the file (0: the file as a whole).
        precondition((0...lines).contains(error.line), "a policy error points past the end of the file")
    }
    return 0
}
