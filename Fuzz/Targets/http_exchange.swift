// Fuzz target `http_exchange`: the per-connection state machine that decides
// what the daemon's HTTP/1 guard does with each event a local caller causes
// (Sources/KeyVault/API/HTTPExchange.swift): bytes, heads of either version
// with or without keep-alive, bodies, ends, parse errors, deadlines, answers.
//
// Input: `u8 refused`, then one event per byte (its low 3 bits; the bits above
// are the event's flags). Checked beside "never traps": once the parser failed,
// a deadline cut a request short, the connection was refused or an answer
// closed it, no later head is passed on.
@testable import KeyVault
import NIOHTTP1
import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    var exchange = HTTPExchange(refused: input.bool())
    var closing = false
    var steps = 0
    while !input.isEmpty, steps < 4096 {
        steps += 1
        let byte = input.u8()
        let flags = byte >> 3
        switch byte & 7 {
        case 0:
            _ = exchange.bytesArrived()
        case 1:
            let version: HTTPVersion = flags & 1 == 0 ? .http1_1 : .http1_0
            let action = exchange.headArrived(.init(version: version, keepAlive: flags & 2 != 0))
            if closing, case .pass = action { preconditionFailure("a head was passed on after the connection was to close") }
            if action == .refuse { closing = true }
        case 2:
            _ = exchange.bodyArrived()
        case 3:
            _ = exchange.endArrived()
        case 4:
            // Nothing can be read after the parser failed, whatever is still to be answered.
            _ = exchange.parseError()
            closing = true
        case 5:
            if exchange.deadlinePassed() != .none { closing = true }
        case 6:
            _ = exchange.responseHead(hasContentLength: flags & 1 != 0, closeRequested: flags & 2 != 0)
        default:
            if exchange.responseEnd() == .close { closing = true }
        }
        _ = exchange.isBusy
    }
    return 0
}
