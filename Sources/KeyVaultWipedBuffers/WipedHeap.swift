package import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// malloc, realloc and free for NIO buffers that may hold a key's encoding (an answer on its
/// way to the socket in the daemon; an answer read from it in the client library): a block is
/// zeroed when it is released, whenever its last holder lets go. Each block starts with a
/// 16-byte header holding its size (16 keeps malloc's alignment), so a release knows how much
/// to zero. No libsodium: the client library links only this and NIO.
package enum WipedHeap {
    /// Heap blocks released zeroed through `deallocate`, since the process started.
    package static let wipedBlocks = Atomic<Int>(0)

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
        // explicit_bzero: a zeroing the compiler may not leave out because the block is freed next.
        explicit_bzero(base, header + base.load(as: Int.self))
        free(base)
        wipedBlocks.add(1, ordering: .relaxed)
    }
}
