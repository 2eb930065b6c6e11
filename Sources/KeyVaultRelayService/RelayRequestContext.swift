import Hummingbird
import Synchronization

/// The relay's request context: Hummingbird's own, and what became of the
/// request beyond its status (the refusal's kind), for the access log and the
/// metrics, which see only the answer.
struct RelayRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let outcome = RequestOutcome()

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
    }
}

/// Shared by every copy of one request's context: the router passes contexts by value.
final class RequestOutcome: Sendable {
    private let kind = Mutex<String?>(nil)

    /// The `error` of the refusal the request was answered with (RELAY.md, "Answers"), if it was.
    var refusal: String? {
        get { kind.withLock { $0 } }
        set { kind.withLock { $0 = newValue } }
    }
}
