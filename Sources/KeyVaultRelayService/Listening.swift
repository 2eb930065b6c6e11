import NIOCore
import ServiceLifecycle
#if canImport(Glibc)
import Glibc
#endif

/// A listener whose failure to take its address says which address: NIO's own
/// error names only the call (`bind(descriptor:ptr:bytes:)`).
struct Listening<Inner: Service>: Service {
    let inner: Inner
    /// What listens, for the sentence: "keyvault-relay", "the metrics listener".
    let what: String
    let host: String
    let port: Int

    func run() async throws {
        do {
            try await inner.run()
        } catch let error as IOError where [EADDRINUSE, EADDRNOTAVAIL, EACCES].contains(error.errnoCode) {
            let why = switch error.errnoCode {
            case EADDRINUSE: "another process listens there"
            case EADDRNOTAVAIL: "no interface of this machine has that address"
            default: "this user may not listen on that port"
            }
            throw RelayServer.RunError(description: "\(what) cannot listen on \(host):\(port): \(why) (\(String(cString: strerror(error.errnoCode))))")
        }
    }
}
