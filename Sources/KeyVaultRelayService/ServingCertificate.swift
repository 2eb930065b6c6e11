import Foundation
import NIOSSL
import Synchronization

/// The certificate chain and key the relay serves over TLS, from their files: read
/// at start and again at SIGHUP (`Reloader`). Each connection takes the context in
/// force when it is accepted (`ReloadingTLSChannel`), so a reload changes what new
/// connections are served and nothing of those already open, held reads among them.
final class ServingCertificate: Sendable {
    let certificateFile: String
    let keyFile: String
    private let current: Mutex<(context: NIOSSLContext, expires: Date)>

    /// Throws a `StartError` naming the file that does not load.
    init(certificate: String, key: String) throws {
        certificateFile = certificate
        keyFile = key
        current = Mutex(try Self.load(certificate: certificate, key: key))
    }

    var context: NIOSSLContext { current.withLock { $0.context } }
    /// When the leaf certificate in force expires.
    var expires: Date { current.withLock { $0.expires } }

    /// Reads both files again and serves them from the next connection on; when they
    /// do not load (unreadable, not PEM, a key that is not the certificate's), the
    /// context in force stays and the error says why. Returns the new leaf's expiry.
    func reload() throws -> Date {
        let loaded = try Self.load(certificate: certificateFile, key: keyFile)
        current.withLock { $0 = loaded }
        return loaded.expires
    }

    private static func load(certificate: String, key: String) throws -> (context: NIOSSLContext, expires: Date) {
        let chain: [NIOSSLCertificate], privateKey: NIOSSLPrivateKey
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificate)
        } catch {
            throw RelayServer.StartError(description: "--tls-cert: cannot load a PEM certificate chain from \(certificate) (\(error))")
        }
        guard let leaf = chain.first else { throw RelayServer.StartError(description: "--tls-cert: \(certificate) holds no certificate") }
        do {
            privateKey = try NIOSSLPrivateKey(file: key, format: .pem)
        } catch {
            throw RelayServer.StartError(description: "--tls-key: cannot load a PEM private key from \(key) (\(error))")
        }
        var configuration = TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) },
                                                                    privateKey: .privateKey(privateKey))
        // Closing a connection waits this long for the peer's close_notify, which an idle client may never
        // send (NIO's default is 5 s): at SIGTERM every answer is already out, so the wait only delays the stop.
        configuration.shutdownTimeout = .milliseconds(500)
        do {
            // BoringSSL checks here that the key is the leaf certificate's.
            return (try NIOSSLContext(configuration: configuration), Date(timeIntervalSince1970: TimeInterval(leaf.notValidAfter)))
        } catch {
            throw RelayServer.StartError(description: "--tls-key: \(key) is not the key of the certificate in \(certificate) (\(error))")
        }
    }
}
