#if canImport(Glibc)
import Glibc
#endif

/// A line to standard error, for messages a person reads before logging is up.
package enum StandardError {
    package static func print(_ line: String) {
        FileDescriptorOutput.standardError.write(Array((line + "\n").utf8))
    }
}

/// Bytes written whole to an open descriptor (standard output or error), with `write(2)`
/// itself: Foundation's `FileHandle` would link all of Foundation, and its ICU data, into the CLI.
package struct FileDescriptorOutput: Sendable {
    package let descriptor: Int32

    package static let standardOutput = FileDescriptorOutput(descriptor: STDOUT_FILENO)
    package static let standardError = FileDescriptorOutput(descriptor: STDERR_FILENO)

    /// Writes every byte, through short writes and interruptions; stops quietly if the reader went away.
    package func write(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, bytes.count - offset) }
            if written > 0 {
                offset += written
            } else if written < 0 && errno == EINTR {
                continue
            } else {
                return
            }
        }
    }
}
