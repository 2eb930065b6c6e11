#if canImport(Glibc)
import Glibc
#endif

/// Zeroes bytes that held a key, in a way the compiler may not leave out.
enum Wipe {
    static func bytes(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress else { return }
        explicit_bzero(base, buffer.count)
    }
}
