#if canImport(Glibc)
import Glibc
#endif

/// Zeroes bytes that held a key, in a way the compiler may not leave out. The CLI
/// (which links no libsodium) wipes what it reads and prints with it too.
package enum Wipe {
    package static func bytes(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress else { return }
        explicit_bzero(base, buffer.count)
    }

    package static func bytes(_ array: inout [UInt8]) {
        array.withUnsafeMutableBytes { bytes($0) }
    }
}
