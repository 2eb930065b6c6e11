import Foundation
import Hummingbird
import Logging

/// In front of the router: one access-log line and the request metrics per
/// request, routed or not. Only what the route template, the method and the
/// answer say: never the path as sent (an account), the query, a header (the
/// signature, `Authorization`) or a body (an identity token).
/// The methods named as themselves; any other token a client sends is `other`, so it cannot grow the metrics.
private let namedMethods: Set<String> = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"]

struct AccessLog<Inner: HTTPResponder>: HTTPResponder where Inner.Context == RelayRequestContext {
    let inner: Inner
    let metrics: RelayMetrics
    let logger: Logger

    func respond(to request: Request, context: RelayRequestContext) async throws -> Response {
        let started = ContinuousClock.now
        do {
            let response = try await inner.respond(to: request, context: context)
            record(request, context, status: Int(response.status.code), since: started)
            return response
        } catch {
            // Hummingbird answers what escapes the router with 500 (or the error's own status).
            record(request, context, status: Int((error as? any HTTPResponseError)?.status.code ?? 500), since: started)
            throw error
        }
    }

    private func record(_ request: Request, _ context: RelayRequestContext, status: Int, since started: ContinuousClock.Instant) {
        let method = namedMethods.contains(request.method.rawValue) ? request.method.rawValue : "other"
        let route = context.endpointPath.flatMap { $0 == "NotFound" ? nil : $0 } ?? "unmatched"
        let refusal = context.outcome.refusal
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        var metadata: Logger.Metadata = [
            "method": "\(method)", "route": "\(route)", "status": .stringConvertible(status), "seconds": .stringConvertible((seconds * 1000).rounded() / 1000),
        ]
        if let refusal { metadata["refusal"] = "\(refusal)" }
        logger.info("request", metadata: metadata)
        // Counted after its line is written: a scrape never counts a request whose line is not in the log yet.
        metrics.request(method: method, route: route, status: status)
        if let refusal { metrics.refusal(refusal) }
    }
}
