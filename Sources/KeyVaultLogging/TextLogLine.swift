/// `TIMESTAMP LEVEL LABEL: key=value … [SOURCE] message`, as swift-log's stream handler
/// writes it, except that a value holding a space, a quote, `=` or a control character is
/// quoted (`key="a b"`, `\"` and `\\` inside), so a line splits back into its fields.
package enum TextLogLine {
    static func line(_ record: LogRecord) -> String {
        var line = "\(record.timestamp) \(record.level) \(record.label):"
        for field in record.fields { line += " \(field.key)=\(quotedIfNeeded(field.value))" }
        return line + " [\(record.source)] \(record.message)"
    }

    /// The value as is, or in double quotes when it would otherwise not read back as one value.
    package static func quotedIfNeeded(_ value: String) -> String {
        let needsQuotes = value.isEmpty || value.unicodeScalars.contains { scalar in
            scalar == " " || scalar == "\"" || scalar == "=" || scalar == "\\" || scalar.properties.generalCategory == .control
        }
        guard needsQuotes else { return value }
        var quoted = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": quoted += "\\\""
            case "\\": quoted += "\\\\"
            case "\n": quoted += "\\n"
            case "\r": quoted += "\\r"
            case "\t": quoted += "\\t"
            default:
                if scalar.properties.generalCategory == .control {
                    quoted += "\\u{" + String(scalar.value, radix: 16) + "}"
                } else {
                    quoted.unicodeScalars.append(scalar)
                }
            }
        }
        return quoted + "\""
    }
}
