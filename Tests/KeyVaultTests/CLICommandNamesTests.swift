import Foundation
import Testing

/// The CLI's start (issue 35): swift-argument-parser names a command that does not name itself
/// from `String(describing: Self.self)`, three conformance scans of the whole binary for each of
/// its subcommands at every start (about half of `keyvault key get`'s instructions, BENCHMARKS.md
/// "The CLI's one-shot read"). Every command names itself.
@Suite("The CLI's commands name themselves")
struct CLICommandNamesTests {
    @Test("every CommandConfiguration in Sources/keyvault gives its commandName")
    func everyCommandNamesItself() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let folder = root.appendingPathComponent("Sources/keyvault")
        var configurations = 0
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) where name.hasSuffix(".swift") {
            let source = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
            for configuration in source.components(separatedBy: "CommandConfiguration(").dropFirst() {
                configurations += 1
                let arguments = configuration.prefix { $0 != ")" }
                #expect(arguments.contains("commandName:"), "\(name): CommandConfiguration(\(arguments.prefix(60))…) does not name its command")
            }
        }
        #expect(configurations >= 29, "only \(configurations) commands found in \(folder.path)")
    }
}
