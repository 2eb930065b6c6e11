import KeyVaultCrypto
import KeyVaultEngine
import KeyVaultPolicy

/// `lockedMemory` in `GET /v1/status`: the process's secret memory, in bytes.
struct LockedMemoryStatus: Encodable {
    /// Secrets held, and the bytes of the slots they occupy.
    var secrets: Int
    var inUse: Int
    /// Pages set aside for secrets (what is asked to be locked), and of those, what `mlock` accepted.
    var reserved: Int
    var locked: Int
    /// `reserved` that `mlock` refused: may be swapped to disk. 0 unless the limit is too low.
    var swappable: Int
    /// RLIMIT_MEMLOCK; null when no limit applies (unlimited, or CAP_IPC_LOCK).
    var limit: Int?

    static func current() -> LockedMemoryStatus {
        let usage = LockedPool.shared.usage
        return LockedMemoryStatus(secrets: usage.secrets, inUse: usage.inUse, reserved: usage.reserved, locked: usage.locked,
                                  swappable: usage.swappable, limit: LockedMemory.current().effective)
    }

    private enum CodingKeys: String, CodingKey {
        case secrets, inUse, reserved, locked, swappable, limit
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(secrets, forKey: .secrets)
        try container.encode(inUse, forKey: .inUse)
        try container.encode(reserved, forKey: .reserved)
        try container.encode(locked, forKey: .locked)
        try container.encode(swappable, forKey: .swappable)
        try container.encode(limit, forKey: .limit)  // null, not absent, when nothing caps it
    }
}
