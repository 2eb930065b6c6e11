#if canImport(Glibc)
import Glibc
#endif
import KeyVaultClient

/// Standard input read whole, with `read(2)` itself (Foundation's `FileHandle` would link
/// all of Foundation into the CLI). What it holds may be a plaintext to seal: every buffer
/// it outgrows is wiped before it is let go.
enum StandardInput {
    struct Failure: Error, CustomStringConvertible {
        let errno: Int32
        var tooLarge = false
        var description: String {
            tooLarge ? "standard input holds more than \(StandardInput.limit / (1024 * 1024)) MiB"
                     : "cannot read standard input: \(String(cString: strerror(errno)))"
        }
    }

    /// More than any request the daemon takes: `seal < /dev/zero` stops here, not at the memory's end.
    static let limit = 16 * 1024 * 1024

    static func readAll() throws(Failure) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var count = 0
        defer { Wipe.bytes(&buffer) }
        while true {
            if count == buffer.count {
                guard buffer.count < limit else { throw Failure(errno: 0, tooLarge: true) }
                var larger = [UInt8](repeating: 0, count: buffer.count * 2)
                larger.withUnsafeMutableBytes { target in buffer.withUnsafeBytes { target.copyMemory(from: $0) } }
                Wipe.bytes(&buffer)
                buffer = larger
            }
            let read = buffer.withUnsafeMutableBytes { Glibc.read(STDIN_FILENO, $0.baseAddress! + count, $0.count - count) }
            if read > 0 {
                count += read
            } else if read == 0 {
                return Array(buffer[..<count])
            } else {
                switch errno {
                case EINTR: continue
                case EAGAIN:
                    // A standard input left non-blocking by whoever started us: wait for more.
                    var ready = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
                    _ = poll(&ready, 1, -1)
                case let error: throw Failure(errno: error)
                }
            }
        }
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces, tabs and line ends.
    var trimmedOfWhitespace: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0.isNewline }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}
