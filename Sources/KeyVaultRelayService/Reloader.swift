import Foundation
import Logging
import ServiceLifecycle
import UnixSignals

/// SIGHUP reads the TLS certificate and key and the issuer's key set again
/// (`systemctl reload`). A file that does not load is refused, logged with why,
/// and the one in force stays; nothing open is closed, so held reads ride it out.
struct Reloader: Service {
    /// Trapped before the relay says it listens, so a SIGHUP from then on never kills it.
    let signals: UnixSignalsSequence
    /// nil with `--plain-http`.
    let certificate: ServingCertificate?
    let issuerKeys: IssuerKeys
    let metrics: RelayMetrics
    let logger: Logger

    func run() async {
        for await _ in signals.cancelOnGracefulShutdown() {
            await reload()
        }
    }

    private func reload() async {
        if let certificate {
            do {
                let expires = try certificate.reload()
                metrics.reload(.tlsCertificate, refused: false)
                logger.notice("the TLS certificate was reloaded", metadata: [
                    "certificate": "\(certificate.certificateFile)", "expires": "\(expires.formatted(.iso8601))",
                ])
            } catch {
                metrics.reload(.tlsCertificate, refused: true)
                logger.error("the TLS certificate was not reloaded; the one in force stays", metadata: ["problem": "\(error)"])
            }
        }
        do {
            let keys = try await issuerKeys.reload()
            metrics.reload(.identityKeySet, refused: false)
            logger.notice("the identity key set was reloaded", metadata: ["keys": "\(keys)"])
        } catch {
            metrics.reload(.identityKeySet, refused: true)
            logger.error("the identity key set was not reloaded; the one in force stays", metadata: ["problem": "\(error)"])
        }
    }
}
