import HummingbirdCore
import Logging
import NIOCore

/// PROXY protocol version 2 (HAProxy's "proxy-protocol.txt", section 2.2): the
/// binary header a load balancer or TLS terminator (HAProxy, nginx, Envoy) sends
/// first on each connection, naming the client it forwards. Taken only from
/// configured trusted peers (`--proxy-protocol-from`), whose connections must start
/// with one; from anyone else nothing is parsed. The per-address budgets
/// (connections, bodies in flight) then key on the real client.
///
/// `parse` is a pure function over bytes (fuzzable); `ProxyProtocolHandler` feeds it.
enum ProxyHeaderV2 {
    static let signature: [UInt8] = [0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A]
    /// The longest header taken: the fixed 16 bytes and 1 KiB of addresses and TLVs.
    static let maxLength = 16 + 1024

    enum Parsed: Equatable {
        /// Not enough bytes yet to tell.
        case needMore
        /// Not a valid version 2 header: the connection is refused.
        case invalid(String)
        /// A whole header of `length` bytes; `client` the source address it names (nil: a LOCAL
        /// connection, the proxy's own health check, or an address family without one).
        case header(length: Int, client: String?)
    }

    static func parse(_ bytes: some Collection<UInt8>) -> Parsed {
        let bytes = Array(bytes.prefix(maxLength))
        for (index, byte) in bytes.prefix(signature.count).enumerated() where byte != signature[index] {
            return .invalid("not a PROXY protocol version 2 header")
        }
        guard bytes.count >= 16 else { return .needMore }
        let versionCommand = bytes[12], familyProtocol = bytes[13]
        guard versionCommand >> 4 == 2 else { return .invalid("PROXY protocol version \(versionCommand >> 4), not 2") }
        let command = versionCommand & 0x0F
        guard command <= 1 else { return .invalid("an unknown PROXY command") }
        let length = 16 + (Int(bytes[14]) << 8 | Int(bytes[15]))
        guard length <= maxLength else { return .invalid("a PROXY header longer than \(maxLength) bytes") }
        guard bytes.count >= length else { return .needMore }
        // LOCAL: the proxy speaks for itself; the addresses, if any, are ignored.
        guard command == 1 else { return .header(length: length, client: nil) }
        let body = bytes[16..<length]
        switch familyProtocol {
        case 0x11, 0x12: // TCP or UDP over IPv4: source, destination, source port, destination port.
            guard body.count >= 12 else { return .invalid("a PROXY header too short for its IPv4 addresses") }
            return .header(length: length, client: text(Array(body.prefix(4))))
        case 0x21, 0x22: // over IPv6
            guard body.count >= 36 else { return .invalid("a PROXY header too short for its IPv6 addresses") }
            return .header(length: length, client: text(Array(body.prefix(16))))
        case 0x00, 0x31, 0x32: // UNSPEC, or a UNIX socket: no client address to key on.
            return .header(length: length, client: nil)
        default:
            return .invalid("an unknown PROXY address family")
        }
    }
}

extension ProxyHeaderV2 {
    /// An address as NIO writes a peer's (`SocketAddress.ipAddress`), so both key the same budgets.
    static func text(_ packed: [UInt8]) -> String? {
        (try? SocketAddress(packedIPAddress: ByteBuffer(bytes: packed), port: 0))?.ipAddress
    }
}

/// Peers allowed to say who the client is: CIDR blocks (`10.0.0.0/8`, `::1/128`, `127.0.0.1`).
struct TrustedPeers: Sendable, Equatable {
    struct Block: Sendable, Equatable {
        let bytes: [UInt8]
        let prefix: Int
    }
    let blocks: [Block]

    init(_ cidrs: [String]) throws {
        blocks = try cidrs.map { text in
            let parts = text.split(separator: "/", maxSplits: 1)
            guard let first = parts.first, let address = try? SocketAddress(ipAddress: String(first), port: 0),
                  let bytes = Self.bytes(of: address) else {
                throw RelayServer.StartError(description: "--proxy-protocol-from: \(text) is not an address or CIDR block")
            }
            let prefix = parts.count == 2 ? Int(parts[1]) : bytes.count * 8
            guard let prefix, (0...bytes.count * 8).contains(prefix) else {
                throw RelayServer.StartError(description: "--proxy-protocol-from: \(text) has no valid prefix length")
            }
            return Block(bytes: bytes, prefix: prefix)
        }
    }

    var isEmpty: Bool { blocks.isEmpty }

    func contains(_ address: SocketAddress?) -> Bool {
        guard let address, let bytes = Self.bytes(of: address) else { return false }
        return blocks.contains { block in
            guard block.bytes.count == bytes.count else { return false }
            var left = block.prefix
            for (a, b) in zip(block.bytes, bytes) where left > 0 {
                let bits = min(left, 8)
                let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
                if a & mask != b & mask { return false }
                left -= bits
            }
            return true
        }
    }

    private static func bytes(of address: SocketAddress) -> [UInt8]? {
        switch address {
        case .v4(let v4): return withUnsafeBytes(of: v4.address.sin_addr) { Array($0) }
        case .v6(let v6): return withUnsafeBytes(of: v6.address.sin6_addr) { Array($0) }
        default: return nil
        }
    }
}

/// The client a trusted proxy named: sent down the pipeline, before any of the
/// connection's bytes, to the handlers that budget by address (`BodyBudget`).
struct ProxiedClient: Sendable {
    /// The client's address, or nil when the proxy named none (its own LOCAL connection).
    let address: String?
}

/// First on a trusted peer's connection: reads the version 2 header, says whom it
/// names, then passes the rest on and leaves the pipeline. A connection that does
/// not start with a valid header is closed.
final class ProxyProtocolHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private var buffered: ByteBuffer?
    private var done = false
    private let logger: Logger

    init(logger: Logger) {
        self.logger = logger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !done else { return context.fireChannelRead(data) }
        var incoming = unwrapInboundIn(data)
        if var held = buffered {
            held.writeBuffer(&incoming)
            buffered = held
        } else {
            buffered = incoming
        }
        guard var bytes = buffered else { return }
        switch ProxyHeaderV2.parse(bytes.readableBytesView) {
        case .needMore:
            return
        case .invalid(let why):
            done = true
            buffered = nil
            logger.notice("a connection from a trusted proxy did not start with a PROXY protocol version 2 header; closed",
                          metadata: ["why": "\(why)"])
            context.close(promise: nil)
        case .header(let length, let client):
            done = true
            buffered = nil
            bytes.moveReaderIndex(forwardBy: length)
            context.fireUserInboundEventTriggered(ProxiedClient(address: client))
            if bytes.readableBytes > 0 { context.fireChannelRead(wrapInboundOut(bytes)) }
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
    }
}

/// A server channel whose connections from trusted peers start with a PROXY header
/// (`ProxyProtocolHandler` first, before TLS and HTTP); others' are as before.
struct ProxyProtocolChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value
    let base: Base
    let trusted: TrustedPeers
    let logger: Logger

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            if trusted.contains(channel.remoteAddress) {
                try channel.pipeline.syncOperations.addHandler(ProxyProtocolHandler(logger: self.logger), position: .first)
            }
        }.flatMap {
            base.setup(channel: channel, logger: logger)
        }
    }

    func handle(value: Base.Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}
