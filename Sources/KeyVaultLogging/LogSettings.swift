package import Logging

/// `--log-level` and `--log-format` as both executables take them, checked once:
/// a name that is not a level or a format is refused with the names that are.
package struct LogSettings: Sendable {
    package let level: Logger.Level
    package let format: LogFormat

    package static let levelNames = Logger.Level.allCases.map(\.rawValue)
    package static let formatNames = LogFormat.allCases.map(\.rawValue)

    package init(level: Logger.Level = .info, format: LogFormat = .text) {
        self.level = level
        self.format = format
    }

    /// `option`: how the caller names the setting in the error (a flag, a variable).
    package init(level levelName: String, format formatName: String,
                 levelOption: String = "--log-level", formatOption: String = "--log-format") throws(LogSettingsError) {
        guard let level = Logger.Level(rawValue: levelName) else {
            throw LogSettingsError(description: "\(levelOption) takes one of \(Self.levelNames.joined(separator: ", ")), not '\(levelName)'")
        }
        guard let format = LogFormat(rawValue: formatName) else {
            throw LogSettingsError(description: "\(formatOption) takes one of \(Self.formatNames.joined(separator: ", ")), not '\(formatName)'")
        }
        self.init(level: level, format: format)
    }

    /// Makes every logger of the process write to standard error in this format, from this level up.
    /// Call it once, before the first logger is made (swift-log allows one bootstrap per process).
    package func bootstrap() {
        let (level, format) = (self.level, self.format)
        LoggingSystem.bootstrap { label in FormattedLogHandler(label: label, level: level, format: format) }
    }
}

package struct LogSettingsError: Error, CustomStringConvertible {
    package let description: String
}
