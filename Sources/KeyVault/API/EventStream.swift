import Foundation
import Hummingbird
import HTTPTypes
import NIOCore
import KeyVaultAccount
import KeyVaultEngine
import KeyVaultPolicy

/// `text/event-stream` of an account's events (`key-ready`, `device-enrolled`,
/// `locked`, `unlocked`…), each `id: EPOCH-N`, `event: NAME` and one JSON
/// `data:` line; a client resumes with `Last-Event-ID` (`EventBacklog`).
/// A comment line every 15 s keeps idle connections open. The stream ends
/// when the client goes away, or, after a last `forbidden` event, when a
/// policy reload no longer allows the caller to follow the account.
enum EventStream {
    static func response(_ events: AsyncStream<NumberedEvent>, held: HeldRequest) -> Response {
        let body = ResponseBody { writer in
            defer { held.release() }
            try await writer.write(ByteBuffer(string: ": keyvaultd events\n\n"))
            // Bounded: a client that stops reading fills it, and its stream ends rather than growing;
            // it resumes with Last-Event-ID and is given what it missed, or resync.
            let (merged, continuation) = AsyncStream<String>.makeStream(bufferingPolicy: .bufferingOldest(EventBacklog.capacity))
            let send: @Sendable (String) -> Void = { chunk in
                if case .dropped = continuation.yield(chunk) { continuation.finish() }
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await event in events { send(render(event)) }
                    continuation.finish()
                }
                group.addTask {
                    while !Task.isCancelled {
                        try await Task.sleep(for: .seconds(15))
                        send(": keep-alive\n\n")
                    }
                }
                // Ending the held request (client gone, or the policy changed) finishes the stream.
                try await held.whileHeld(onEnd: { end in
                    if case .forbidden(let refusal) = end { continuation.yield(forbidden(refusal)) }
                    continuation.finish()
                }) {
                    for await chunk in merged { try await writer.write(ByteBuffer(string: chunk)) }
                }
                group.cancelAll()
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-store"], body: body)
    }

    static func render(_ numbered: NumberedEvent) -> String {
        let event = numbered.event
        var object: [String: Any] = event.fields
        for (name, number) in event.numbers { object[name] = number }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        return "id: \(numbered.id)\nevent: \(event.name)\ndata: \(data)\n\n"
    }

    /// The `Last-Event-ID` a resuming client sent. One longer than any id this
    /// daemon makes is not kept: it is malformed, and answered with `resync`.
    static func lastEventID(_ request: Request) -> String? {
        guard let name = HTTPField.Name("Last-Event-ID"), let value = request.headers[name] else { return nil }
        return value.utf8.count <= 64 ? value : ""
    }

    /// The last event of a stream the policy no longer allows, in the contract's shape.
    static func forbidden(_ refusal: Refusal) -> String {
        let body = APIResponse.body(refusal)
        return "event: forbidden\ndata: \(String(buffer: body))\n\n"
    }
}
