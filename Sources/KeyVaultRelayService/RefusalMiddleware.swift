import Hummingbird
import NIOCore
import Logging

/// Turns every error a route throws into an answer from RELAY.md's table: a
/// refusal as it is, a body over the limit as `too-large`, and anything else
/// (the store failed, or a bug) as `unavailable`, never an opaque 500.
/// The refusal's kind is noted on the context for the access log.
struct RefusalMiddleware: RouterMiddleware {
    typealias Context = RelayRequestContext
    let logger: Logger

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound || error.status == .methodNotAllowed {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            let refusal = refusal(for: error)
            context.outcome.refusal = refusal.wire.error
            throw refusal
        }
    }

    private func refusal(for error: any Error) -> Refusal {
        switch error {
        case let refusal as Refusal:
            return refusal
        case is NIOTooManyBytesError:
            // What `collect(upTo:)` throws for a body over the limit.
            return Refusal.tooLarge
        case let error as HTTPError where error.status == .contentTooLarge:
            return Refusal.tooLarge
        default:
            // The store's own words (PostgreSQL's message and SQLSTATE), never a request's values.
            logger.error("answered unavailable", metadata: ["error": "\(StoreProblem.describe(error).prefix(300))"])
            return Refusal.unavailable
        }
    }
}
