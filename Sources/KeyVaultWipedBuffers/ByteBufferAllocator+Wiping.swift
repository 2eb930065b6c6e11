@_spi(CustomByteBufferAllocator) package import NIOCore

extension ByteBufferAllocator {
    /// Buffers for bytes that may carry a key's encoding: ordinary heap, zeroed when released
    /// (`WipedHeap`). NIO frees a buffer's storage when its last holder lets go (the socket
    /// write, after the bytes were sent; the parser, after a body was taken), so the wipe never
    /// races a use, and a copy NIO makes of such a buffer uses this allocator too.
    package static let wiping = ByteBufferAllocator(
        allocate: { WipedHeap.allocate($0) },
        reallocate: { WipedHeap.reallocate($0, $1, $2) },
        deallocate: { WipedHeap.deallocate($0) },
        copy: { $0.copyMemory(from: $1, byteCount: $2) })
}
