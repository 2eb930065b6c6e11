// Fuzz target `relay_rows`: what a relay service answers a device's read
// (`GET /v1/accounts/{account}/records`, RELAY.md): the JSON rows, as the
// daemon's client decodes them (`RelayWire.Rows`, then `row(account:)`), each
// row then read by its kind's decoder and checked against the circle the
// rows' log entries make, as this device (fixed device 0, the vectors' laptop) would. Also the other JSON
// bodies the relay service and the device exchange (`RelayWire`).
//
// Input: the JSON body.
import Foundation
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultRelayWire
import KeyVaultAccount
import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let body = Data(bytes: data, count: size)
    let decoder = JSONDecoder()
    _ = try? decoder.decode(RelayWire.Publish.self, from: body)
    _ = try? decoder.decode(RelayWire.Refusal.self, from: body)
    _ = try? decoder.decode(RelayWire.Candidacy.self, from: body)
    _ = try? decoder.decode(RelayWire.Candidate.self, from: body)
    guard let wire = try? decoder.decode(RelayWire.Rows.self, from: body) else { return 0 }
    var circle = CircleState(account: FuzzKeys.account)
    var last = RelayCursor.start
    let me = FuzzKeys.devices[0]
    for row in wire.rows.prefix(64).compactMap({ $0.row(account: FuzzKeys.account) }) {
        last = max(last, row.cursor)
        let record = row.record
        guard record.body.count <= RelayRecord.maxBodyByteCount else { continue }
        trace("row \(row.cursor): \(record.kind)")
        switch record.kind {
        case .log:
            if let entry = try? LogEntry.decode(record.body), record.logSeq.map({ $0 == entry.seq }) ?? true {
                do { try circle.apply(entry) } catch { trace("log: \(error)") }
            }
        case .request:
            if SignedEnvelope.label(of: record.body) == Labels.pairingRequest {
                _ = try? PairingRequest.decode(record.body)
            } else {
                _ = try? EnrollmentRequest.decode(record.body)
            }
        case .challenge:
            switch SignedEnvelope.label(of: record.body) {
            case Labels.pairingResponse:
                do { _ = try PairingResponse.accept(record.body, in: circle) } catch { trace("response: \(error)") }
            case Labels.pairingApproval:
                _ = try? PairingApproval.decode(record.body) { circle.isTrusted($0) ? circle.members[$0]?.keys.signing : nil }
            default: _ = try? EnrollmentChallenge.accept(record.body, in: circle)
            }
        case .reveal:
            _ = PairingConfirmation.requestHash(of: record.body)
        case .share:
            guard record.recipient == FuzzKeys.deviceIDs[0],
                  (KeyShare.minSealedByteCount...KeyShare.maxSealedByteCount).contains(record.body.count) else { continue }
            do {
                let share = try KeyShare.accept(record.body, with: me.box, as: FuzzKeys.deviceIDs[0], in: circle)
                trace("share of generation \(share.header.generation) accepted")
            } catch { trace("share: \(error)") }
        case .ack:
            if let ack = try? ShareAck.decode(record.body) {
                var promotions = Promotions()
                _ = try? promotions.acknowledged(ack, circle: circle, me: FuzzKeys.deviceIDs[0], at: FuzzKeys.now)
            }
        }
        // What the device would send back: the record, as the wire carries it.
        _ = RelayWire.Record(record)
    }
    _ = last.description
    exercise(circle)
    return 0
}
