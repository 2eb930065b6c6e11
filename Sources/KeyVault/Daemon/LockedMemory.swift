import CLinux
import Foundation
import Logging
import Synchronization
import KeyVaultCrypto
import KeyVaultEngine
import KeyVaultPolicy

/// RLIMIT_MEMLOCK against what the daemon's secrets need.
///
/// Every secret is in the crypto layer's `LockedPool`: pages locked with
/// `mlock`, which a process without CAP_IPC_LOCK may do only up to its
/// RLIMIT_MEMLOCK (8 MiB by default on most distributions). At start the daemon
/// raises its soft limit to the hard limit, estimates what its accounts need
/// when unlocked, and says plainly when the limit is short and what to set. If
/// `mlock` is refused later all the same, the daemon keeps running (refusing
/// to unlock would turn a configuration slip into an outage) but does not
/// keep quiet: the error is logged with the fix, and `GET /v1/status` reports
/// the bytes that may be swapped (`lockedMemory.swappable`).
enum LockedMemory {
    /// What an unlocked account keeps locked, with room to spare: its KEK, the
    /// device's signing key (seed and expanded) and box key, and a key per
    /// generation, in slots of 32 and 64 bytes: 192 bytes for an account with
    /// one generation (measured: 10,000 accounts, 1.9 MB); a generation adds 32.
    static let bytesPerAccount = 512
    /// A partly filled 64 KiB region per slot size, and the daemon's secrets besides accounts'.
    static let headroom = 1 << 20

    /// About what `accounts` unlocked accounts need locked.
    static func need(accounts: Int) -> Int {
        accounts * bytesPerAccount + headroom
    }

    struct Limit: Sendable {
        /// RLIMIT_MEMLOCK; `UInt64.max` is unlimited.
        var soft: UInt64
        var hard: UInt64
        /// CAP_IPC_LOCK: the limit does not apply to this process.
        var exempt: Bool

        /// The bytes `mlock` may hold, or nil when nothing caps it.
        var effective: Int? {
            exempt || soft == .max ? nil : Int(clamping: soft)
        }
    }

    static func current() -> Limit {
        var soft: UInt64 = 0, hard: UInt64 = 0
        if kv_memlock_limit(&soft, &hard) != 0 { soft = .max; hard = .max }
        return Limit(soft: soft, hard: hard, exempt: hasIPCLockCapability)
    }

    /// CAP_IPC_LOCK (bit 14) in the effective set, from /proc/self/status.
    static var hasIPCLockCapability: Bool {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("CapEff:") }),
              let mask = UInt64(line.dropFirst("CapEff:".count).trimmingCharacters(in: .whitespaces), radix: 16)
        else { return false }
        return mask & (1 << 14) != 0
    }

    /// At start, before any account is loaded: the soft limit up to the hard
    /// one (which needs no privilege), and a loud line for every region of
    /// secrets that cannot be locked from now on.
    static func prepare(logger: Logger) {
        _ = kv_raise_memlock_to_hard()
        let reporter = FailureReporter(logger: logger)
        LockedPool.shared.onLockFailure { usage in reporter.report(usage) }
    }

    /// Once the vault is loaded: whether the limit covers what its accounts need unlocked.
    static func check(accounts: Int, logger: Logger) {
        let limit = current()
        let need = need(accounts: accounts)
        guard let effective = limit.effective else {
            logger.info("locked memory: no limit applies", metadata: [
                "accounts": "\(accounts)", "need": "\(bytes(need))", "why": "\(limit.exempt ? "CAP_IPC_LOCK" : "RLIMIT_MEMLOCK unlimited")",
            ])
            return
        }
        if need <= effective {
            logger.info("locked memory: the limit covers the accounts", metadata: [
                "accounts": "\(accounts)", "need": "\(bytes(need))", "limit": "\(bytes(effective))",
            ])
            return
        }
        let who = accounts == 0 ? "with no account yet, the daemon needs" : "\(count(accounts)) accounts need"
        logger.warning("""
            locked memory limit is \(bytes(effective)); \(who) about \(bytes(need)): \
            \(advice(need: need)), or secrets past the limit will be kept in memory that may be swapped to disk
            """)
    }

    /// "raise it (systemd: LimitMEMLOCK=32M; a shell: ulimit -l 32768)", for about `need` bytes with room to grow.
    static func advice(need: Int) -> String {
        var mebibytes = 16
        while mebibytes << 20 < 2 * need { mebibytes *= 2 }
        return "raise it (systemd: LimitMEMLOCK=\(mebibytes)M; a shell: ulimit -l \(mebibytes * 1024))"
    }

    static func bytes(_ count: Int) -> String {
        if count < 1 << 20 { return "\(count >> 10) KiB" }
        let mebibytes = Double(count) / Double(1 << 20)
        return mebibytes < 10 ? String(format: "%.1f MiB", mebibytes) : "\(Int(mebibytes.rounded())) MiB"
    }

    /// 10000 as "10,000".
    static func count(_ value: Int) -> String {
        let digits = Array(String(value))
        var out = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { out += "," }
            out.append(digit)
        }
        return out
    }

    /// Logs a refused `mlock` the first time, then each time the swappable
    /// bytes double, so a long run of refusals is a few lines, not one per region.
    final class FailureReporter: Sendable {
        let logger: Logger
        private let reported = Mutex(0)

        init(logger: Logger) {
            self.logger = logger
        }

        func report(_ usage: LockedPool.Usage) {
            let due = reported.withLock { last in
                guard usage.swappable >= 2 * last, usage.swappable > 0 else { return false }
                last = usage.swappable
                return true
            }
            guard due else { return }
            let limit = LockedMemory.current().effective.map(LockedMemory.bytes) ?? "unlimited"
            logger.error("""
                secrets are being kept in memory that may be swapped to disk: mlock was refused for \
                \(LockedMemory.bytes(usage.swappable)) of the \(LockedMemory.bytes(usage.reserved)) set aside for secrets; \
                the locked memory limit is \(limit): \(LockedMemory.advice(need: usage.reserved + LockedMemory.headroom))
                """)
        }
    }
}
