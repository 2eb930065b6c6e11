import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultStore
/// A policy problem, located: "policy/default.toml:12: unknown permission 'raed'".
public struct PolicyError: Error, Sendable, Equatable, CustomStringConvertible {
    public var file: String
    public var line: Int
    public var message: String

    public init(file: String, line: Int, message: String) {
        self.file = file
        self.line = line
        self.message = message
    }

    public var description: String { line > 0 ? "\(file):\(line): \(message)" : "\(file): \(message)" }
}
