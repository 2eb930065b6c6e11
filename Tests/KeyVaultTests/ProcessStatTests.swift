import Foundation
import Testing
@testable import KeyVaultRelayService

/// The relay's process metrics as read from /proc (issue 36): the stat line's fields
/// counted from the command's last parenthesis, whatever the command holds.
@Suite("Relay service: the process's figures from /proc")
struct ProcessStatTests {
    @Test("fields after the command, a command with spaces and parentheses included; a short or garbled line is nothing")
    func parse() throws {
        // Fields 3 to 24 of proc(5): state … utime (14) stime (15) … starttime (22) vsize (23) rss (24), then more.
        let rest = "S 1 2 3 0 -1 4194560 100 0 0 0 150 25 0 0 20 0 9 0 4242 123456789 3000 18446744073709551615"
        #expect(ProcessStat.parse("77 (keyvault-relay) " + rest)
                == ProcessStat(cpuTicks: 175, startTicks: 4242, virtualBytes: 123_456_789, residentPages: 3000))
        #expect(ProcessStat.parse("77 (a) (b c) " + rest)?.cpuTicks == 175)
        #expect(ProcessStat.parse("77 (keyvault-relay) S 1 2 3") == nil)
        #expect(ProcessStat.parse("no command here") == nil)
        #expect(ProcessStat.bootTime("cpu  1 2 3\nbtime 1767225600\nprocesses 9\n") == 1_767_225_600)
        #expect(ProcessStat.bootTime("cpu  1 2 3\n") == nil)
    }

    @Test("this process's own: it has run, holds memory and descriptors, within its limit")
    func ownProcess() throws {
        let stat = try #require(ProcessStat.read())
        #expect(stat.residentPages > 0)
        #expect(stat.residentPages * UInt64(ProcessStat.pageSize) <= stat.virtualBytes)
        let open = try #require(ProcessStat.openFiles())
        #expect(open >= 3)
        #expect(UInt64(open) <= (ProcessStat.maxFiles() ?? 0))
    }
}
