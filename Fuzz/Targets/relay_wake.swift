// Fuzz target `relay_wake`: a NOTIFY payload on the relay's channel, as the
// relay service's listener reads it (Sources/KeyVaultRelay/RelayWake.swift).
// Whoever may connect to the database may NOTIFY on the channel.
//
// Input: the payload's bytes. Checked beside "never traps": a payload read as
// one account names that account (and, with a cursor, one past the start), and
// a landed one written back is the same payload.
import KeyVaultProtocol
import KeyVaultRelay

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let payload = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    switch RelayWake(payload: payload) {
    case .landed(let account, let through):
        precondition(through > .start, "a commit's last cursor at the start")
        precondition(payload.hasPrefix(account.rawValue + " "), "a landed wake-up for an account the payload does not name")
        if !payload.contains("+"), !payload.split(separator: " ").last!.hasPrefix("0") {
            precondition(RelayWake.payload(account, through: through) == payload, "a payload read back is not the one written")
        }
    case .accounts(let accounts):
        precondition(accounts.count == 1 && accounts.first!.rawValue == payload, "an account wake-up that is not the payload")
    case .any:
        break
    case .opened:
        preconditionFailure("a payload read as the store reopened")
    }
    return 0
}
