internal import CSodium
package import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Best-effort zeroing of an ordinary buffer that held a caller's plaintext,
/// so it does not linger in freed memory. (Copies Swift made are beyond reach.)
package enum Wipe {
    package static func bytes(_ buffer: inout [UInt8]) {
        buffer.withUnsafeMutableBytes { raw in
            if let base = raw.baseAddress { sodium_memzero(base, raw.count) }
        }
    }

    /// Heap blocks released zeroed through `deallocate`, since the process started.
    package static let wipedBlocks = Atomic<Int>(0)

    // malloc, realloc and free for an answer that carries a key's encoding on
    // its way to the socket (the daemon's NIO buffer allocator for key answers):
    // a block is zeroed when it is released, whenever the last holder lets go.
    // Each block starts with a 16-byte header holding its size (16 keeps
    // malloc's alignment), so a release knows how much to zero.

    private static let header = 16

    package static func allocate(_ size: Int) -> UnsafeMutableRawPointer? {
        guard let base = malloc(header + size) else { return nil }
        base.storeBytes(of: size, as: Int.self)
        return base + header
    }

    /// Never leaves the old block behind unzeroed (realloc would free it as it is).
    package static func reallocate(_ old: UnsafeMutableRawPointer?, _ oldSize: Int, _ newSize: Int) -> UnsafeMutableRawPointer? {
        guard let new = allocate(newSize) else { return nil }
        if let old {
            new.copyMemory(from: old, byteCount: min(oldSize, newSize))
            deallocate(old)
        }
        return new
    }

    package static func deallocate(_ pointer: UnsafeMutableRawPointer) {
        let base = pointer - header
        sodium_memzero(base, header + base.load(as: Int.self))
        free(base)
        wipedBlocks.add(1, ordering: .relaxed)
    }
}
