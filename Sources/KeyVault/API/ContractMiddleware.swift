import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import KeyVaultProtocol
import KeyVaultAccount
import KeyVaultEngine
import KeyVaultPolicy

/// The outermost layer: reads the whole body (every route, within the
/// limit), refuses browsers and unidentified callers before any routing, and
/// turns every error into a contract answer. A `Refusal` renders as itself;
/// Hummingbird's own errors become `invalid` or `unknown`; anything else is an
/// opaque `error` that leaks nothing.
struct ContractMiddleware: RouterMiddleware {
    typealias Context = VaultRequestContext
    let logger: Logger
    let inProgress: RequestsInProgress

    static let tooLarge = Refusal(.invalid, "the request body is larger than 64 KiB; nothing was done and the connection is closed")
    /// A body declared over the limit but not over this is read and dropped, a buffer at a time,
    /// before the refusal: a client that sends its whole body before it reads (socat, many HTTP
    /// clients) meets a closed socket otherwise, and never reads why. Larger ones are refused
    /// unread. The request's deadline bounds the reading either way.
    static let droppedAtMost = 1 << 20

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await inProgress.during { try await answer(request, context: context, next: next) }
        // A request's bytes (a passphrase, a record to seal) stay in the connection's read buffers until
        // they are released, and a kept-alive connection releases them only when it closes: after a request
        // with a body the connection is closed once answered, so they are wiped now, not when the client goes.
        if Self.hasBody(request) { response.headers[.connection] = "close" }
        return response
    }

    /// Reads a body to its end, keeping none of it.
    private static func drop(_ body: HummingbirdCore.RequestBody) async throws {
        for try await _ in body {}
    }

    /// The body's length as its `Content-Length` declares it, if it does.
    private static func declaredLength(_ request: Request) -> Int? {
        request.headers[.contentLength].flatMap { Int($0) }
    }

    static func hasBody(_ request: Request) -> Bool {
        request.headers[.transferEncoding] != nil || (declaredLength(request) ?? 0) > 0
    }

    private func answer(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        // The body is read whole before anything else, so no route acts on a request that is too
        // large, malformed or cut off, whether or not it reads its body.
        var request = request
        if let length = Self.declaredLength(request), length > context.maxUploadSize {
            if length <= Self.droppedAtMost { try? await Self.drop(request.body) }
            return Self.closing(Self.tooLarge)
        }
        do {
            _ = try await request.collectBody(upTo: context.maxUploadSize)
        } catch is NIOTooManyBytesError {
            return Self.closing(Self.tooLarge)
        } catch is HTTPParserError {
            return Self.closing(ConnectionGuard.malformed)
        } catch let error as RequestDeadlineExceeded {
            return Self.closing(Refusal(.invalid, "the request did not arrive whole within \(error.seconds) s; the connection is closed"))
        } catch {
            return Self.closing(Refusal(.invalid, "the request body could not be read; the connection is closed"))
        }
        // No web page may drive the daemon, whatever the socket's mode.
        if request.headers[.origin] != nil || request.headers[.referer] != nil {
            return APIResponse.refusal(Refusal(.forbidden, "requests from a web browser (with Origin or Referer) are refused"))
        }
        guard context.peer != nil else {
            return APIResponse.refusal(Refusal(.forbidden, "the caller's credentials could not be read"))
        }
        do {
            return try await next(request, context)
        } catch let refusal as Refusal {
            return APIResponse.refusal(refusal)
        } catch let error as HTTPError {
            return APIResponse.refusal(Self.translate(error))
        } catch VaultError.corrupt(let why) {
            // Damage or tampering in what this device stores: said as such, never as a 500.
            logger.error("vault damaged", metadata: ["path": "\(request.uri.path)", "problem": "\(why)"])
            return APIResponse.refusal(Refusal(.damaged, "the data stored on this device is damaged: \(why); nothing was changed"))
        } catch let error where VaultError.storageFailure(error) != nil {
            // The machine's failure, said plainly: a full disk is something a person can fix.
            let why = VaultError.storageFailure(error) ?? ""
            logger.error("vault storage failed", metadata: ["path": "\(request.uri.path)", "problem": "\(why)"])
            return APIResponse.refusal(Refusal(.error, "\(why); nothing was changed, try again once there is room"))
        } catch RelayError.identity(let why) {
            // The person's sign-in did not prove this account: said as the contract's `denied`.
            return APIResponse.refusal(Refusal(.denied, "the relay service refused the identity token: \(why); nothing was changed"))
        } catch RelayError.refused(let why) {
            return APIResponse.refusal(Refusal(.denied, "the relay service refused this device: \(why); nothing was changed"))
        } catch let error as RelayError {
            // What needs the relay now (enrolling, say) says so; what can wait for it is queued, not refused.
            return APIResponse.refusal(Refusal(.error, "\(error); nothing was changed, try again once it is back"))
        } catch is NIOTooManyBytesError {
            // What body collection throws past `maxUploadSize`.
            return APIResponse.refusal(Refusal(.invalid, "the request body is larger than 64 KiB"))
        } catch {
            logger.error("request failed", metadata: ["path": "\(request.uri.path)", "error": "\(String(reflecting: type(of: error)))"])
            return APIResponse.refusal(Refusal(.error, "internal error; nothing was changed"))
        }
    }

    /// An answer after which the connection is closed (what is left of the request is not read).
    static func closing(_ refusal: Refusal) -> Response {
        var response = APIResponse.refusal(refusal)
        response.headers[.connection] = "close"
        return response
    }

    static func translate(_ error: HTTPError) -> Refusal {
        switch error.status.code {
        case 404: return Refusal(.unknown, "no such endpoint; see docs/API.md")
        case 405: return Refusal(.invalid, "this endpoint does not take that method")
        case 413: return Refusal(.invalid, "the request body is larger than 64 KiB")
        default: return Refusal(.invalid, error.body ?? "the request could not be read")
        }
    }
}
