import Foundation
import KeyVaultClient
import Synchronization

/// Every answer the integration suites get through `DaemonProcess.request`,
/// written as JSON lines to `$KEYVAULT_API_RECORD` when it is set (by
/// `make test`), for `tools/check-openapi` to hold against docs/openapi.yaml.
final class APIRecord: Sendable {
    static let shared: APIRecord? = ProcessInfo.processInfo.environment["KEYVAULT_API_RECORD"].flatMap { $0.isEmpty ? nil : APIRecord(path: $0) }

    private let file: Mutex<FileHandle?>

    /// Opened to append: `make test` runs suites in two test processes at once, and each line
    /// goes to the file's end in one write, never over another process's.
    private init?(path: String) {
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return nil }
        file = Mutex(FileHandle(fileDescriptor: fd, closeOnDealloc: true))
    }

    func append(method: String, path: String, _ result: DaemonResponse) {
        let exchange: [String: Any] = [
            "method": method, "path": path, "status": result.status,
            "contentType": result.header("Content-Type") ?? "", "body": result.text,
        ]
        guard var line = try? JSONSerialization.data(withJSONObject: exchange, options: [.sortedKeys]) else { return }
        line.append(UInt8(ascii: "\n"))
        file.withLock { $0?.write(line) }
    }
}
