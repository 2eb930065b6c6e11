// Stand-in for the one corner of Hummingbird that the daemon's body parsers
// name (Sources/KeyVault/API/SecretBody.swift, RequestBodies.swift), so those
// files compile unchanged into a fuzz binary without SwiftPM and NIO. Nothing
// here is fuzzed: the harness calls the parsers on bytes directly.
public import Foundation
public import NIOCore

public struct Request: Sendable {
    public var body: RequestBody
    public init(bytes: [UInt8]) { body = RequestBody(bytes: bytes) }
}

public struct RequestBody: Sendable {
    var bytes: [UInt8]
    public func collect(upTo limit: Int) async throws -> ByteBuffer { ByteBuffer(bytes: Array(bytes.prefix(limit))) }
}

extension Data {
    /// NIOFoundationCompat's `Data(buffer:)`.
    public init(buffer: ByteBuffer) { self.init(buffer.bytes) }
}
