internal import CSodium

/// Best-effort zeroing of an ordinary buffer that held a caller's plaintext,
/// so it does not linger in freed memory. (Copies Swift made are beyond reach.)
package enum Wipe {
    package static func bytes(_ buffer: inout [UInt8]) {
        buffer.withUnsafeMutableBytes { raw in
            if let base = raw.baseAddress { sodium_memzero(base, raw.count) }
        }
    }
}
