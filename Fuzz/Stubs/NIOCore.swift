// Stand-in for NIOCore's ByteBuffer, as far as the daemon's body parsers use it
// (see Hummingbird.swift beside this file).
public struct ByteBuffer: Sendable {
    public var bytes: [UInt8]
    public init(bytes: [UInt8]) { self.bytes = bytes }

    public func withUnsafeReadableBytes<T>(_ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        try bytes.withUnsafeBytes(body)
    }
}
