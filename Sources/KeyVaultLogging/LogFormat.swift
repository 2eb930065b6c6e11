/// How a log line is written: `text` for a person at a terminal, `json` for a collector.
package enum LogFormat: String, CaseIterable, Sendable {
    /// `TIMESTAMP LEVEL LABEL: key=value … [SOURCE] message`, a value quoted when it needs to be.
    case text
    /// One JSON object per line: timestamp, level, label, message, source and the metadata as string fields.
    case json
}
