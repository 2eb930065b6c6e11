import Hummingbird
import NIOCore
import Logging
import KeyVaultProtocol

/// Turns every error a route throws into an answer from RELAY.md's table: a
/// refusal as it is, a body over the limit as `too-large`, and anything else
/// (the store failed, or a bug) as `unavailable`, never an opaque 500.
struct RefusalMiddleware<Context: RequestContext>: RouterMiddleware {
    let logger: Logger

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let refusal as Refusal {
            throw refusal
        } catch is NIOTooManyBytesError {
            // What `collect(upTo:)` throws for a body over the limit.
            throw Refusal.tooLarge
        } catch let error as HTTPError where error.status == .contentTooLarge {
            throw Refusal.tooLarge
        } catch let error as HTTPError where error.status == .notFound || error.status == .methodNotAllowed {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            logger.error("answered unavailable", metadata: ["error": "\(String(describing: error).prefix(300))"])
            throw Refusal.unavailable
        }
    }
}
