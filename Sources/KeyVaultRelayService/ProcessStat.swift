import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The process's own figures as Linux reports them in /proc/self, read at each
/// scrape: what an operator compares across instances (memory per held read,
/// descriptors against the limit, CPU).
struct ProcessStat: Equatable {
    /// User and system time, in clock ticks.
    var cpuTicks: UInt64
    /// When the process started, in clock ticks since boot.
    var startTicks: UInt64
    var virtualBytes: UInt64
    var residentPages: UInt64

    /// A `/proc/[pid]/stat` line. The command (field 2) is in parentheses and may hold spaces and
    /// parentheses itself, so fields are counted from the last `)`: field n is the (n − 3)th after it.
    static func parse(_ line: String) -> ProcessStat? {
        guard let close = line.lastIndex(of: ")") else { return nil }
        let fields = line[line.index(after: close)...].split(separator: " ")
        guard fields.count >= 22, let user = UInt64(fields[11]), let system = UInt64(fields[12]),
              let start = UInt64(fields[19]), let virtual = UInt64(fields[20]), let resident = Int64(fields[21]) else { return nil }
        return ProcessStat(cpuTicks: user + system, startTicks: start, virtualBytes: virtual, residentPages: UInt64(max(resident, 0)))
    }

    static func read() -> ProcessStat? {
        (try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8)).flatMap(parse)
    }

    /// The boot time, in seconds since the epoch: `/proc/stat`'s `btime` line.
    static func bootTime(_ text: String) -> UInt64? {
        text.split(separator: "\n").first { $0.hasPrefix("btime ") }.flatMap { UInt64($0.dropFirst("btime ".count)) }
    }

    /// Descriptors open now (the one this count reads with among them, as Prometheus's clients count).
    static func openFiles() -> Int? {
        try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count
    }

    /// The soft limit on open descriptors (RLIMIT_NOFILE).
    static func maxFiles() -> UInt64? {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        return UInt64(limit.rlim_cur)
    }

    static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
    static let pageSize = Double(sysconf(Int32(_SC_PAGESIZE)))
}
