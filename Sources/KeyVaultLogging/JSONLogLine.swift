import Foundation

/// One JSON object per line, encoded by JSONSerialization: `timestamp` (ISO 8601, UTC),
/// `level`, `label`, `source`, `message`, and each metadata item as a field: a number
/// for a value logged as a number (a status, a duration), a string otherwise. A
/// metadata key that would replace one of those is written as `metadata.KEY`.
enum JSONLogLine {
    static let reservedKeys: Set<String> = ["timestamp", "level", "label", "source", "message"]

    static func line(_ record: LogRecord) -> String {
        var object: [String: Any] = [
            "timestamp": record.timestamp, "level": record.level.rawValue, "label": record.label,
            "source": record.source, "message": record.message,
        ]
        for field in record.fields {
            object[reservedKeys.contains(field.key) ? "metadata." + field.key : field.key] = record.numbers[field.key] ?? field.value
        }
        // Strings and finite numbers alone, so this does not fail; its output escapes every newline, so it is one line.
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else {
            return #"{"level":"error","message":"a log line could not be encoded as JSON"}"#
        }
        return String(decoding: data, as: UTF8.self)
    }
}
