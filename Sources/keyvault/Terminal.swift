#if canImport(Glibc)
import Glibc
#endif

/// Whether a person is watching: progress lines are for a terminal, not for a script's log.
enum Terminal {
    static var standardErrorIsOne: Bool { isatty(STDERR_FILENO) == 1 }
}
