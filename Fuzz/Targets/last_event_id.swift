// Fuzz target `last_event_id`: the `Last-Event-ID` header a local caller sends
// to resume an account's event stream, against the daemon's backlog of
// numbered events (Sources/KeyVaultEngine/Sync/EventBacklog.swift).
//
// Input: `u8 events` (that many events are numbered first), then the header's
// value. Checked beside "never traps": a replay is a `resync` alone, or the
// events after the one named, in order, ending at the last.
@testable import KeyVaultEngine
import KeyVaultAccount
import FuzzSupport

let epoch = "0123456789abcdef"

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    var backlog = EventBacklog(epoch: epoch)
    let count = Int(input.u8())
    for i in 0..<count { _ = backlog.append(AccountEvent(name: "rotated", fields: ["n": "\(i)"])) }
    let header = String(decoding: input.rest(), as: UTF8.self)
    let replay = backlog.replay(after: header)
    if replay.count == 1, replay[0].event.name == "resync" { return 0 }
    precondition(replay.count <= EventBacklog.capacity, "a replay longer than the backlog")
    precondition(replay.allSatisfy { $0.event.name == "rotated" }, "a replay with a resync among events")
    if let last = replay.last { precondition(last.id == "\(epoch)-\(backlog.lastNumber)", "a replay that does not end at the last event") }
    let numbers = replay.compactMap { UInt64($0.id.split(separator: "-").last!) }
    precondition(zip(numbers, numbers.dropFirst()).allSatisfy { $0 + 1 == $1 }, "a replay out of order")
    return 0
}
