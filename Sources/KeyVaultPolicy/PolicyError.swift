/// A policy problem, located: "policy/default.toml:12: unknown permission 'raed'".
package struct PolicyError: Error, Sendable, Equatable, CustomStringConvertible {
    package var file: String
    package var line: Int
    package var message: String

    package init(file: String, line: Int, message: String) {
        self.file = file
        self.line = line
        self.message = message
    }

    package var description: String { line > 0 ? "\(file):\(line): \(message)" : "\(file): \(message)" }
}
