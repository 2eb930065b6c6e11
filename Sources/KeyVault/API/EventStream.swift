import Foundation
import Hummingbird
import NIOCore
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultStore

/// `text/event-stream` of an account's events (`key-ready`, `device-enrolled`,
/// `locked`, `unlocked`…), each `event: NAME` and one JSON `data:` line.
/// A comment line every 15 s keeps idle connections open.
enum EventStream {
    static func response(_ events: AsyncStream<AccountEvent>) -> Response {
        let body = ResponseBody { writer in
            try await writer.write(ByteBuffer(string: ": keyvaultd events\n\n"))
            try await withThrowingTaskGroup(of: Void.self) { group in
                let (merged, continuation) = AsyncStream<String>.makeStream()
                group.addTask {
                    for await event in events { continuation.yield(render(event)) }
                    continuation.finish()
                }
                group.addTask {
                    while !Task.isCancelled {
                        try await Task.sleep(for: .seconds(15))
                        continuation.yield(": keep-alive\n\n")
                    }
                }
                for await chunk in merged { try await writer.write(ByteBuffer(string: chunk)) }
                group.cancelAll()
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-store"], body: body)
    }

    static func render(_ event: AccountEvent) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: event.fields, options: [.sortedKeys])).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        return "event: \(event.name)\ndata: \(data)\n\n"
    }
}
