#if canImport(Glibc)
import Glibc
#endif

/// A line to standard error, for messages a person reads before logging is up.
package enum StandardError {
    package static func print(_ line: String) {
        try? FileDescriptorOutput.standardError.write(Array((line + "\n").utf8))
    }
}

/// Bytes written whole to an open descriptor (standard output or error), with `write(2)`
/// itself: Foundation's `FileHandle` would link all of Foundation, and its ICU data, into the CLI.
package struct FileDescriptorOutput: Sendable {
    package let descriptor: Int32

    package init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    package static let standardOutput = FileDescriptorOutput(descriptor: STDOUT_FILENO)
    package static let standardError = FileDescriptorOutput(descriptor: STDERR_FILENO)

    /// Why not every byte was written: `errno`. EPIPE: the reader went away (SIGPIPE is
    /// ignored in a process that runs SwiftNIO, so a write says so instead of ending it).
    package struct Failure: Error, CustomStringConvertible {
        package let errno: Int32
        package var readerGone: Bool { errno == EPIPE }
        package var description: String { String(cString: strerror(errno)) }
    }

    /// Writes every byte, through short writes, interruptions and a descriptor left
    /// non-blocking (waiting until it can take more); any other failure is thrown, never
    /// taken for success: a truncated plaintext must not exit 0.
    package func write(_ bytes: [UInt8]) throws(Failure) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, bytes.count - offset) }
            if written > 0 {
                offset += written
                continue
            }
            let error = written < 0 ? errno : EIO
            switch error {
            case EINTR: continue
            case EAGAIN:
                var ready = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                _ = poll(&ready, 1, -1)
            default: throw Failure(errno: error)
            }
        }
    }
}
