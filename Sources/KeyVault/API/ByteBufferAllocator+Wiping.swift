@_spi(CustomByteBufferAllocator) import NIOCore
import KeyVaultCrypto

extension ByteBufferAllocator {
    /// Buffers for answers that carry a key's encoding: ordinary heap, zeroed
    /// when released. NIO frees a buffer's storage when its last holder lets go
    /// (the socket write, after the bytes were sent), so the wipe never races
    /// the write, and a copy NIO makes of such a buffer uses this allocator too.
    static let wiping = ByteBufferAllocator(
        allocate: { Wipe.allocate($0) },
        reallocate: { Wipe.reallocate($0, $1, $2) },
        deallocate: { Wipe.deallocate($0) },
        copy: { $0.copyMemory(from: $1, byteCount: $2) })
}
