import Foundation
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultAccount
import KeyVaultVault
import KeyVaultRelay
import KeyVaultRelayClient
import KeyVaultRelayStore

/// A process's memory mappings against the kernel's limit
/// (`vm.max_map_count`). A daemon's secrets share locked regions of many
/// slots (three mappings per 64 KiB), so mappings no longer grow with each secret.
enum ProcessLimits {
    /// Lines of /proc/PID/maps.
    static func mappings(of process: Int32) -> Int {
        // A /proc file has no size: read it to its end.
        guard let file = FileHandle(forReadingAtPath: "/proc/\(process)/maps") else { return 0 }
        defer { try? file.close() }
        return file.readDataToEndOfFile().reduce(0) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 }
    }

    /// vm.max_map_count (65530 unless the machine's owner raised it).
    static var maxMappings: Int {
        let text = (try? String(contentsOfFile: "/proc/sys/vm/max_map_count", encoding: .utf8)) ?? ""
        return Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 65530
    }
}
