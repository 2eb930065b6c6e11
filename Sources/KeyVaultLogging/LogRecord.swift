import Foundation
import Logging

/// What one log line says, whatever its format: the fields both handlers write.
struct LogRecord {
    let timestamp: String
    let level: Logger.Level
    let label: String
    let source: String
    let message: String
    /// Sorted by key; each value as its text.
    let fields: [(key: String, value: String)]
    /// The fields whose value is a number (logged as `.stringConvertible` of an integer or a
    /// floating-point value), which JSON writes as numbers.
    let numbers: [String: NSNumber]

    private static let timestampStyle = Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt)

    /// The handler's own metadata, then its provider's, then the call's (the later wins), and an error if one came.
    init(event: LogEvent, label: String, metadata: Logger.Metadata, provider: Logger.MetadataProvider?) {
        var merged = metadata
        if let provided = provider?.get() { merged.merge(provided) { _, new in new } }
        if let explicit = event.metadata { merged.merge(explicit) { _, new in new } }
        if let error = event.error {
            merged["error.message"] = "\(error)"
            merged["error.type"] = "\(String(reflecting: type(of: error)))"
        }
        timestamp = Self.timestampStyle.format(Date())
        level = event.level
        self.label = label
        source = event.source
        message = event.message.description
        fields = merged.map { (key: $0.key, value: $0.value.description) }.sorted { $0.key < $1.key }
        numbers = merged.compactMapValues { value -> NSNumber? in
            guard case .stringConvertible(let number) = value else { return nil }
            switch number {
            case let n as any BinaryInteger: return Int64(exactly: n).map { NSNumber(value: $0) }
            case let n as Double where n.isFinite: return NSNumber(value: n)
            default: return nil
            }
        }
    }
}

/// Standard error, one write per line, so lines from several threads never interleave.
enum LogOutput {
    static func write(_ line: String) {
        var bytes = Array(line.utf8)
        bytes.append(UInt8(ascii: "\n"))
        FileHandle.standardError.write(Data(bytes))
    }
}
