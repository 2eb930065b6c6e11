import Foundation
import KeyVault
import KeyVaultEngine
import KeyVaultPolicy
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultAccount
import KeyVaultVault
import KeyVaultRelay
import KeyVaultRelayClient
import KeyVaultRelayStore

/// Loads a JSON test-vector file shipped in `vectors/`.
enum Vectors {
    static func load<T: Decodable>(_ name: String, as type: T.Type) throws -> T {
        guard let url = Bundle.module.url(forResource: "vectors/" + name, withExtension: nil)
                ?? Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "vectors") else {
            throw VectorError("vector file \(name) is missing")
        }
        return try JSONDecoder().decode(T.self, from: Data(contentsOf: url))
    }

    static func hex(_ string: String) throws -> [UInt8] {
        guard let bytes = Hex.decode(string) else { throw VectorError("bad hex in a vector") }
        return bytes
    }

    static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }
}

struct VectorError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
