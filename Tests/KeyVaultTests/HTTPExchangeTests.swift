@testable import KeyVault
@testable import KeyVaultEngine
@testable import KeyVaultPolicy
import NIOHTTP1
import Testing

/// The connection guard's decisions, without a channel.
@Suite("HTTPExchange: deadlines, keep-alive, protocol errors")
struct HTTPExchangeTests {
    static let http11 = HTTPExchange.Framing(version: .http1_1, keepAlive: true)

    @Test("a request's deadline runs from its first byte to its end, not while it is answered")
    func deadline() {
        var exchange = HTTPExchange(refused: false)
        let r1 = exchange.bytesArrived()
        #expect(r1)
        let r2 = exchange.bytesArrived()
        #expect(!r2, "started once per request")
        let r3 = exchange.headArrived(Self.http11)
        #expect(r3 == .pass(startDeadline: false))
        let r4 = exchange.endArrived()
        #expect(r4 == .pass)
        #expect(exchange.isBusy, "answering")
        let r5 = exchange.deadlinePassed()
        #expect(r5 == .none, "a request received whole has no deadline")
        let r6 = exchange.responseHead(hasContentLength: true, closeRequested: false)
        #expect(r6.connection == nil)
        let r7 = exchange.responseEnd()
        #expect(r7 == .none)
        #expect(!exchange.isBusy)

        // A head that does not arrive whole is answered; a body that does not, fails its request.
        let r8 = exchange.bytesArrived()
        #expect(r8)
        let r9 = exchange.deadlinePassed()
        #expect(r9 == .answer)
        var body = HTTPExchange(refused: false)
        _ = body.bytesArrived()
        _ = body.headArrived(Self.http11)
        let r10 = body.deadlinePassed()
        #expect(r10 == .failRequest)
        let r11 = body.bodyArrived()
        #expect(r11 == false, "nothing more is read")
    }

    @Test("a request that arrives with the end of the one before starts its own deadline")
    func pipelinedDeadline() {
        var exchange = HTTPExchange(refused: false)
        _ = exchange.bytesArrived()
        _ = exchange.headArrived(Self.http11)
        _ = exchange.endArrived()
        let r12 = exchange.headArrived(Self.http11)
        #expect(r12 == .pass(startDeadline: true))
    }

    @Test("HTTP/1.0 keeps the connection only with keep-alive and a length; Connection: close closes")
    func keepAlive() {
        var plain = HTTPExchange(refused: false)
        _ = plain.headArrived(.init(version: .http1_0, keepAlive: false))
        _ = plain.endArrived()
        let head = plain.responseHead(hasContentLength: true, closeRequested: false)
        #expect(head.version == .http1_0)
        #expect(head.connection == "close")
        let r13 = plain.responseEnd()
        #expect(r13 == .close)
        let r14 = plain.headArrived(Self.http11)
        #expect(r14 == .drop, "nothing after the last request is read")

        var kept = HTTPExchange(refused: false)
        _ = kept.headArrived(.init(version: .http1_0, keepAlive: true))
        _ = kept.endArrived()
        let r15 = kept.responseHead(hasContentLength: true, closeRequested: false)
        #expect(r15.connection == "keep-alive")
        let r16 = kept.responseEnd()
        #expect(r16 == .none)
        _ = kept.headArrived(.init(version: .http1_0, keepAlive: true))
        _ = kept.endArrived()
        let r17 = kept.responseHead(hasContentLength: false, closeRequested: false)
        #expect(r17.connection == "close", "a stream without a length ends with the connection")
        let r18 = kept.responseEnd()
        #expect(r18 == .close)

        var closing = HTTPExchange(refused: false)
        _ = closing.headArrived(Self.http11)
        _ = closing.endArrived()
        let r19 = closing.responseHead(hasContentLength: true, closeRequested: true)
        #expect(r19.connection == "close")
        let r20 = closing.responseEnd()
        #expect(r20 == .close)
    }

    @Test("a protocol error: in a body it fails the request; between requests it is answered, in turn")
    func parseErrors() {
        var inBody = HTTPExchange(refused: false)
        _ = inBody.bytesArrived()
        _ = inBody.headArrived(Self.http11)
        let r21 = inBody.parseError()
        #expect(r21 == .passOn)
        let r22 = inBody.responseHead(hasContentLength: true, closeRequested: true)
        #expect(r22.connection == "close")
        let r23 = inBody.responseEnd()
        #expect(r23 == .close)

        var between = HTTPExchange(refused: false)
        _ = between.bytesArrived()
        let r24 = between.parseError()
        #expect(r24 == .answer)

        // Behind a request still being answered (a waiting read), the 400 waits its turn.
        var behind = HTTPExchange(refused: false)
        _ = behind.headArrived(Self.http11)
        _ = behind.endArrived()
        _ = behind.bytesArrived()
        let r25 = behind.parseError()
        #expect(r25 == .none)
        let r26 = behind.responseHead(hasContentLength: true, closeRequested: false)
        #expect(r26.connection == nil)
        let r27 = behind.responseEnd()
        #expect(r27 == .answerBadRequest)

        // A request answered before its body came (too large): the error only closes.
        var answered = HTTPExchange(refused: false)
        _ = answered.headArrived(Self.http11)
        _ = answered.responseHead(hasContentLength: true, closeRequested: true)
        let r28 = answered.responseEnd()
        #expect(r28 == .close)
        let r29 = answered.parseError()
        #expect(r29 == .none)
    }

    @Test("a refused connection answers its first request and reads nothing more")
    func refused() {
        var exchange = HTTPExchange(refused: true)
        let r30 = exchange.bytesArrived()
        #expect(!r30, "its deadline runs from the start")
        let r31 = exchange.headArrived(Self.http11)
        #expect(r31 == .refuse)
        let r32 = exchange.bodyArrived()
        #expect(r32 == false)
        let r33 = exchange.endArrived()
        #expect(r33 == .drop)
        var silent = HTTPExchange(refused: true)
        let r34 = silent.deadlinePassed()
        #expect(r34 == .close)
    }
}
