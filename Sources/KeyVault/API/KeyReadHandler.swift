import Foundation
import Hummingbird
import Logging
import NIOCore
import KeyVaultProtocol
import KeyVaultAccount
import KeyVaultWipedBuffers
import KeyVaultEngine
import KeyVaultPolicy

/// The key reads: `keys/current`, `keys/N`, `keys/id/ID`, with `?wait=`.
/// Every key released leaves one audit line (who, which account and
/// generation), never the key. Every answer is counted by its state.
struct KeyReadHandler: Sendable {
    let service: KeyVaultService
    let audit: Logger
    let metrics: DaemonMetrics

    func read(_ request: Request, _ context: VaultRequestContext, _ account: AccountID, _ selector: KeySelector) async throws -> Response {
        do {
            let response = try await answer(request, context, account, selector)
            switch response.status.code {
            case ContractState.ready.httpStatus: metrics.keyRead(.ready)
            case ContractState.pending.httpStatus: metrics.keyRead(.pending)
            default: break  // 204: the client went away; nobody was answered
            }
            return response
        } catch let refusal as Refusal {
            metrics.keyRead(refusal.state)
            throw refusal
        }
    }

    private func answer(_ request: Request, _ context: VaultRequestContext, _ account: AccountID, _ selector: KeySelector) async throws -> Response {
        let wait = try waitSeconds(request, context, account)
        let deadline = ContinuousClock.now + .seconds(wait)
        // A waiting read is held on its connection: the client going away, or a reload of the
        // policy that no longer lets it read or wait, ends the wait at once.
        let held = wait > 0 ? context.connection.hold(.waitingRead, account: account, needs: [.read, .wait]) : nil
        defer { held?.release() }
        while true {
            // Armed before the check, so a key that lands in between still wakes this read.
            let token = wait > 0 ? service.hub.arm(account) : nil
            guard let read = service.read(account, selector) else {
                if let token { service.hub.disarm(account, token) }
                throw Refusal.unknownAccount(account)
            }
            if read.waits, let token, let held, held.end == nil, deadline > .now {
                let woken = await held.whileHeld(onEnd: { [hub = service.hub] _ in hub.fire(account, token) }) {
                    await service.hub.wait(account, token, until: deadline)
                }
                switch held.end {
                case .forbidden(let refusal)?:
                    // A reload took the permission away.
                    throw refusal
                case .gone?:
                    // The connection is closed: no answer can be read, so none is made.
                    return Response(status: .noContent)
                case nil:
                    // Woken by the publish that changed what it reads, with nothing published since: the
                    // answer is that state's (its slot is spent), unless it still waits.
                    if let woken, case let answer = service.read(woken, selector), !answer.waits {
                        return try respond(answer, context, account)
                    }
                    continue
                case .halfClosed?, .stopping?:
                    // The client may still read: it gets the state as it is now.
                    continue
                }
            }
            if let token { service.hub.disarm(account, token) }
            if case .forbidden(let refusal)? = held?.end { throw refusal }
            return try respond(read, context, account)
        }
    }

    private func respond(_ read: KeyRead, _ context: VaultRequestContext, _ account: AccountID) throws -> Response {
        if case .pending(let reason, let since) = read.availability {
            return try APIResponse.json(.pending, PendingBody(reason: reason.rawValue, since: since, pairingCode: read.pairingCode),
                                        retryAfter: PendingBody.retrySeconds)
        }
        return try render(read.availability, context, account)
    }

    private func render(_ availability: KeyAvailability, _ context: VaultRequestContext, _ account: AccountID) throws -> Response {
        switch availability {
        case .ready(let released):
            let peer = context.peer!
            audit.notice("key released", metadata: [
                "uid": "\(peer.uid)", "pid": "\(peer.pid)", "account": "\(account)",
                "generation": "\(released.generation.number)", "keyId": "\(released.generation.keyID)",
            ])
            return KeyBody(released).response
        case .locked, .unknown, .revoked, .destroyed:
            throw availability.refusal(account)
        case .pending:
            preconditionFailure("pending is answered by read()")
        }
    }

    /// `?wait=SECONDS`: 0 to the policy's maximum; waiting itself needs the `wait` permission.
    private func waitSeconds(_ request: Request, _ context: VaultRequestContext, _ account: AccountID) throws -> Int {
        guard let raw = request.uri.queryParameters.get("wait") else { return 0 }
        let maximum = service.policy.current.maxWaitSeconds
        // Plain digits only: no sign, no space, no fraction.
        guard !raw.isEmpty, raw.utf8.count <= 10, raw.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let seconds = Int(raw), seconds <= maximum else {
            throw Refusal.invalid("wait must be a whole number of seconds from 0 to \(maximum)")
        }
        if seconds > 0 { try GuardedRouter.authorize(service.policy, context, .wait, account: account) }
        return seconds
    }
}

/// `pending`: the key is expected here but has not arrived.
struct PendingBody: Encodable {
    static let retrySeconds = 2
    var state = ContractState.pending
    var reason: String
    var since: Date
    /// `awaiting-approval` with the code this device shows; left out when there is none.
    var pairingCode: String?
    var retryAfter = PendingBody.retrySeconds

    init(reason: String, since: Date, pairingCode: String? = nil) {
        self.reason = reason
        self.since = since
        self.pairingCode = pairingCode
    }
}

/// The `ready` answer for a key. Rendered by hand, on the hot path: every
/// value is from a closed alphabet (account IDs, hex, base64, RFC 3339), so
/// none needs escaping.
struct KeyBody {
    var released: ReleasedKey

    init(_ released: ReleasedKey) {
        self.released = released
    }

    /// The JSON, with the key's base64 written straight into a buffer that is
    /// zeroed when NIO releases it (`ByteBufferAllocator.wiping`): no String
    /// or other ordinary copy of the encoded key is made.
    var buffer: ByteBuffer {
        let generation = released.generation
        let head = #"{"account":"\#(released.account.rawValue)","createdAt":"\#(RFC3339.string(from: generation.createdAt))","# +
            #""current":\#(released.isCurrent),"generation":\#(generation.number),"key":""#
        let tail = #"","keyId":"\#(generation.keyID)","state":"ready"}"#
        let key = released.key.bytes
        var buffer = ByteBufferAllocator.wiping.buffer(capacity: head.utf8.count + key.base64Count + 1 + tail.utf8.count)
        buffer.writeString(head)
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: key.base64Count + 1) { key.writeBase64(into: $0) }
        buffer.writeString(tail)
        return buffer
    }

    var response: Response {
        Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: buffer))
    }
}
