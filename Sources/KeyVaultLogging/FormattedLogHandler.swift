package import Logging

/// The log handler of both executables: every line to standard error, in the format
/// `--log-format` chose (`TextLogLine` or `JSONLogLine`), from `--log-level` up.
package struct FormattedLogHandler: LogHandler {
    package var logLevel: Logger.Level
    package var metadata: Logger.Metadata = [:]
    package var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let format: LogFormat

    package init(label: String, level: Logger.Level, format: LogFormat,
                 metadataProvider: Logger.MetadataProvider? = LoggingSystem.metadataProvider) {
        self.label = label
        self.logLevel = level
        self.format = format
        self.metadataProvider = metadataProvider
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        let record = LogRecord(event: event, label: label, metadata: metadata, provider: metadataProvider)
        switch format {
        case .text: LogOutput.write(TextLogLine.line(record))
        case .json: LogOutput.write(JSONLogLine.line(record))
        }
    }
}
