import Foundation
import Hummingbird
import Logging
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultAccount
import KeyVaultEngine
import KeyVaultPolicy

/// `seal` and `open`: batches of AES-256-GCM envelopes under the account's
/// keys. Checks the batch, hands it to the service, and leaves one audit line
/// per batch (who, which account, how many items, which keys), never a plaintext.
struct EnvelopeHandler: Sendable {
    /// Items per batch. The 64 KiB body limit bounds the total size.
    static let maxItems = 1000
    let service: KeyVaultService
    let audit: Logger

    func seal(_ request: Request, _ context: VaultRequestContext, _ account: AccountID) async throws -> Response {
        let body = try await RequestBody.decode(SealBody.self, shape: SealBody.shape, from: request, context: context)
        try Self.checkCount(body.items.count)
        var items = try body.items.enumerated().map { index, item in
            Envelopes.BatchItem(bytes: try Self.base64(item.plaintext, "plaintext", index), aad: try Self.aad(item.aad, index))
        }
        defer { for i in items.indices { Wipe.bytes(&items[i].bytes) } }
        switch try service.envelopes.seal(account, keyID: body.keyId, items: items) {
        case .pending(let reason, let since):
            return try Self.pending(reason, since)
        case .done(let batch):
            log("envelopes sealed", context, account, count: items.count, keyIDs: [batch.keyID])
            return try APIResponse.ready(SealedBody(account: account.rawValue, generation: batch.generation, keyId: batch.keyID,
                                                    envelopes: batch.envelopes.map(Base64.encode)))
        }
    }

    func open(_ request: Request, _ context: VaultRequestContext, _ account: AccountID) async throws -> Response {
        let body = try await RequestBody.decode(OpenBody.self, shape: OpenBody.shape, from: request, context: context)
        try Self.checkCount(body.items.count)
        let items = try body.items.enumerated().map { index, item in
            Envelopes.BatchItem(bytes: try Self.base64(item.envelope, "envelope", index), aad: try Self.aad(item.aad, index))
        }
        switch try service.envelopes.open(account, items: items) {
        case .pending(let reason, let since):
            return try Self.pending(reason, since)
        case .done(var batch):
            // Each plaintext leaves ordinary memory as soon as it is encoded.
            let encoded = batch.plaintexts.indices.map { i in
                defer { Wipe.bytes(&batch.plaintexts[i]) }
                return Base64.encode(batch.plaintexts[i])
            }
            log("envelopes opened", context, account, count: items.count, keyIDs: batch.keyIDs)
            return try APIResponse.ready(OpenedBody(account: account.rawValue, plaintexts: encoded))
        }
    }

    private func log(_ message: Logger.Message, _ context: VaultRequestContext, _ account: AccountID, count: Int, keyIDs: [KeyID]) {
        let peer = context.peer!
        audit.notice(message, metadata: [
            "uid": "\(peer.uid)", "pid": "\(peer.pid)", "account": "\(account)",
            "count": "\(count)", "keyId": "\(keyIDs.map(\.hex).joined(separator: ","))",
        ])
    }

    private static func checkCount(_ count: Int) throws {
        guard (1...maxItems).contains(count) else {
            throw Refusal.invalid("a batch holds 1 to \(maxItems) items; this one has \(count)")
        }
    }

    private static func base64(_ text: String, _ field: String, _ index: Int) throws -> [UInt8] {
        guard let bytes = Base64.decode(text) else { throw Refusal.invalid("item \(index): '\(field)' is not base64 (standard alphabet, padded)") }
        return bytes
    }

    /// An absent AAD is the empty AAD.
    private static func aad(_ text: String?, _ index: Int) throws -> [UInt8] {
        guard let text else { return [] }
        return try base64(text, "aad", index)
    }

    private static func pending(_ reason: KeyAvailability.PendingReason, _ since: Date) throws -> Response {
        try APIResponse.json(.pending, PendingBody(reason: reason.rawValue, since: since), retryAfter: PendingBody.retrySeconds)
    }
}

struct SealedBody: Encodable {
    var state = ContractState.ready
    var account: String
    var generation: Generation
    var keyId: KeyID
    var envelopes: [String]
}

struct OpenedBody: Encodable {
    var state = ContractState.ready
    var account: String
    var plaintexts: [String]
}
