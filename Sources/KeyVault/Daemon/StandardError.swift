import Foundation
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultStore

/// A line to standard error, for messages a person reads before logging is up.
public enum StandardError {
    public static func print(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
