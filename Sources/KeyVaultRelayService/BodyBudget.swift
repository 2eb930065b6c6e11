import HTTPTypes
import NIOCore
import NIOHTTPTypes
import Synchronization

/// What unauthenticated connections can make the relay hold, bounded before
/// any route runs (a request is only authenticated once its body is whole):
///
/// - a body announced (`Content-Length`) over `maxBody` is answered 413 at
///   once, unread; one that grows past it as it arrives, the same;
/// - the bytes of bodies still arriving are counted per client address and in
///   all: past `perAddress` or `total`, the request is answered 503 and its
///   connection closed (what it sent is released);
/// - one address holds at most `connectionsPerAddress` connections; past that a
///   new one is closed as soon as it is accepted.
///
/// So 2,000 connections that each send the head of a large body and then part
/// of it pin at most `perAddress` bytes from one address, and `total` from all.
final class BodyLedger: Sendable {
    struct Limits: Sendable {
        var maxBody = 1 << 20
        var perAddress = 16 << 20
        var total = 256 << 20
        var connectionsPerAddress = 512
    }

    private struct Address {
        var connections = 0
        var bytes = 0
    }

    private struct State {
        var addresses: [String: Address] = [:]
        var total = 0
    }

    let limits: Limits
    private let state = Mutex(State())

    init(limits: Limits = Limits()) { self.limits = limits }

    /// A connection from `address` was accepted: false if that address holds enough.
    func open(_ address: String) -> Bool {
        state.withLock { state in
            guard state.addresses[address, default: Address()].connections < limits.connectionsPerAddress else { return false }
            state.addresses[address, default: Address()].connections += 1
            return true
        }
    }

    func close(_ address: String) {
        state.withLock { state in
            state.addresses[address]?.connections -= 1
            if let entry = state.addresses[address], entry.connections <= 0, entry.bytes <= 0 { state.addresses[address] = nil }
        }
    }

    /// `count` more bytes of a body from `address`: false (nothing taken) past a bound.
    func take(_ count: Int, from address: String) -> Bool {
        state.withLock { state in
            let held = state.addresses[address]?.bytes ?? 0
            guard held + count <= limits.perAddress, state.total + count <= limits.total else { return false }
            state.addresses[address, default: Address()].bytes += count
            state.total += count
            return true
        }
    }

    func give(_ count: Int, from address: String) {
        guard count > 0 else { return }
        state.withLock { state in
            state.addresses[address]?.bytes -= count
            state.total -= count
        }
    }

    /// Bodies still arriving, in bytes (for tests and operators).
    var inFlight: Int { state.withLock { $0.total } }
}

/// One connection's side of `BodyLedger`, between the HTTP codec and the routes.
final class BodyBudget: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let ledger: BodyLedger
    private var address = "unknown"
    private var opened = false
    /// Bytes of the body arriving now, taken from the ledger.
    private var held = 0
    /// A refusal was written: nothing more is read on this connection.
    private var refused = false

    init(ledger: BodyLedger) {
        self.ledger = ledger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        address = context.channel.remoteAddress?.ipAddress ?? "unknown"
        // From a trusted proxy the client is the one its PROXY header names (`ProxiedClient`, before any request).
        if (try? context.pipeline.syncOperations.handler(type: ProxyProtocolHandler.self)) != nil { return }
        openConnection(context)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let proxied = event as? ProxiedClient, !opened {
            if let client = proxied.address { address = client }
            openConnection(context)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    private func openConnection(_ context: ChannelHandlerContext) {
        opened = ledger.open(address)
        if !opened { context.close(promise: nil) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        release()
        if opened {
            ledger.close(address)
            opened = false
        }
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refused else { return }
        switch unwrapInboundIn(data) {
        case .head(let head):
            if let length = head.headerFields[.contentLength].flatMap(Int.init), length > ledger.limits.maxBody {
                return refuse(context, Refusal.tooLarge)
            }
        case .body(let buffer):
            let count = buffer.readableBytes
            guard held + count <= ledger.limits.maxBody else { return refuse(context, Refusal.tooLarge) }
            guard ledger.take(count, from: address) else { return refuse(context, Self.busy) }
            held += count
        case .end:
            release()
        }
        context.fireChannelRead(data)
    }

    static let busy = Refusal(.serviceUnavailable, "unavailable", "too many request bodies are arriving at once; try again shortly", retryAfter: 1)

    private func release() {
        ledger.give(held, from: address)
        held = 0
    }

    /// Answers before any route has the request, and closes: the rest of the body is never read.
    private func refuse(_ context: ChannelHandlerContext, _ refusal: Refusal) {
        refused = true
        release()
        let body = ByteBuffer(bytes: JSON.encode(refusal.wire))
        var fields = HTTPFields()
        fields[.contentType] = "application/json"
        fields[.contentLength] = String(body.readableBytes)
        fields[.connection] = "close"
        if let retryAfter = refusal.retryAfter { fields[.retryAfter] = String(retryAfter) }
        context.write(wrapOutboundOut(.head(HTTPResponse(status: refusal.status, headerFields: fields))), promise: nil)
        context.write(wrapOutboundOut(.body(body)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }
}
