import Foundation

/// A line to standard error, for messages a person reads before logging is up.
package enum StandardError {
    package static func print(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
