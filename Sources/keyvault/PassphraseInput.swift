import ArgumentParser
import FoundationEssentials
#if canImport(Glibc)
import Glibc
import KeyVaultClient
import KeyVaultUnixSocket
#endif

/// Passphrases come from a file, from the terminal without echo, or from
/// standard input; never from the command line, where `ps` would show them.
enum PassphraseInput {
    static func read(file: String?, prompt: String, confirm: Bool) throws -> String {
        if let file {
            guard let data = FileManager.default.contents(atPath: file), let text = String(data: data, encoding: .utf8) else {
                throw UsageError("cannot read the passphrase file \(file)")
            }
            return try nonEmpty(firstLine(text))
        }
        if isatty(STDIN_FILENO) == 1 {
            let first = try fromTerminal(prompt)
            if confirm {
                guard try fromTerminal("Again: ") == first else { throw UsageError("the two passphrases differ") }
            }
            return try nonEmpty(first)
        }
        guard let line = Swift.readLine(strippingNewline: true) else {
            throw UsageError("no passphrase on standard input")
        }
        return try nonEmpty(line)
    }

    private static func firstLine(_ text: String) -> String {
        String(text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
    }

    private static func nonEmpty(_ text: String) throws -> String {
        guard !text.isEmpty else { throw UsageError("the passphrase is empty") }
        return text
    }

    /// Turns echo off on the terminal for one line, and always back on.
    private static func fromTerminal(_ prompt: String) throws -> String {
        try? FileDescriptorOutput.standardError.write(Array(prompt.utf8))
        var saved = termios()
        tcgetattr(STDIN_FILENO, &saved)
        var silent = saved
        silent.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &silent)
        defer {
            tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved)
            try? FileDescriptorOutput.standardError.write(Array("\n".utf8))
        }
        guard let line = Swift.readLine(strippingNewline: true) else { throw UsageError("no passphrase entered") }
        return line
    }
}
