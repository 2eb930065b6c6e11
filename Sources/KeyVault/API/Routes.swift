import Foundation
import Hummingbird
import Logging
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultAccount
import KeyVaultEngine
import KeyVaultPolicy

/// The `/v1` API (docs/API.md): one route per endpoint, each with its permission.
enum Routes {
    static func register(on router: Router<VaultRequestContext>, service: KeyVaultService, audit: Logger, metrics: DaemonMetrics) {
        let routes = GuardedRouter(router: router, policy: service.policy)

        routes.on(.get, "/v1/health", permission: .health) { _, _ in
            try APIResponse.ready(HealthBody(version: KeyVaultVersion.string))
        }
        routes.on(.get, "/v1/status", permission: .status) { _, context in
            // Only the accounts the caller's rules cover.
            let policy = service.policy.current
            func covers(_ account: String) -> Bool {
                guard let peer = context.peer, let id = try? AccountID(validating: account) else { return false }
                return policy.allows(peer, .status, account: id)
            }
            // The relay's per-account lines too: another account's name is not the caller's to see.
            var relay = await service.publishing.relayStatus()
            if let behind = relay?.behind { relay?.behind = behind.filter { covers($0.account) }.nilIfEmpty }
            if let conflicts = relay?.conflicts { relay?.conflicts = conflicts.filter { covers($0.account) }.nilIfEmpty }
            return try APIResponse.ready(StatusBody(version: KeyVaultVersion.string, relay: relay, accounts: service.status().filter { covers($0.account) }))
        }

        routes.on(.post, "/v1/accounts", permission: .create) { request, context in
            let body = try await CreateAccountBody.read(request, context)
            let account: AccountID
            let user = try body.string("user")
            do throws(InvalidInput) { account = try AccountID(validating: user) } catch { throw Refusal.invalid(error.message) }
            try GuardedRouter.authorize(service.policy, context, .create, account: account)
            let accessibility = try body.optional("accessibility").map { raw in
                guard let value = Accessibility(rawValue: raw) else {
                    throw Refusal.invalid("'accessibility' must be \"whenUnlocked\" or \"afterFirstUnlock\"")
                }
                return value
            } ?? .whenUnlocked
            let passphrase = try body.secret("passphrase")
            let status = try await service.createAccount(account, passphrase: passphrase, accessibility: accessibility,
                                                         deviceName: try RequestBody.deviceName(body.optional("deviceName")),
                                                         identityToken: body.optional("identityToken"))
            return try APIResponse.ready(AccountBody(account: status))
        }

        routes.on(.post, "/v1/accounts/import", permission: .create) { request, context in
            let body = try await ImportBody.read(request, context)
            guard let kit = Base64.decode(try body.string("kit")) else { throw Refusal.invalid("'kit' must be base64") }
            // The route lets in a caller who may create some account; the kit's own account is checked before any KDF work.
            let (status, note) = try await service.importRecoveryKit(kit, kitPassphrase: try body.secret("kitPassphrase"),
                                                             passphrase: try body.secret("passphrase"),
                                                             deviceName: try RequestBody.deviceName(body.optional("deviceName"))) { account in
                try GuardedRouter.authorize(service.policy, context, .create, account: account)
            }
            return try APIResponse.ready(ImportedBody(account: status, restored: note))
        }
        routes.on(.post, account: "/recovery-kit", permission: .export) { request, context, account in
            let body = try await RecoveryKitBody.read(request, context)
            let made = try await service.recoveryKits.make(account, kitPassphrase: try body.secret("kitPassphrase"))
            return try APIResponse.ready(KitBody(account: account.rawValue, kit: Base64.encode(made.kit), memberDeviceId: made.member))
        }
        routes.on(.post, account: "/unlock", permission: .unlock) { request, context, account in
            let body = try await PassphraseBody.read(request, context)
            do {
                try await service.unlock(account, passphrase: try body.secret("passphrase"))
            } catch let refusal as Refusal where refusal.state == .denied || refusal.state == .throttled {
                metrics.unlockFailed(refusal.state)
                throw refusal
            }
            return try APIResponse.ready(AccountBody(account: service.statusOf(account)!))
        }
        routes.on(.post, account: "/lock", permission: .lock) { _, _, account in
            try await service.lock(account)
            return try APIResponse.ready(AccountBody(account: service.statusOf(account)!))
        }
        routes.on(.post, account: "/passphrase", permission: .passphrase) { request, context, account in
            let body = try await ChangePassphraseBody.read(request, context)
            let old = try body.secret("old")
            let new = try body.secret("new")
            try await service.changePassphrase(account, old: old, new: new)
            return try APIResponse.ready(AccountBody(account: service.statusOf(account)!))
        }

        routes.on(.post, account: "/enroll", permission: .enroll) { request, context, account in
            let body = try await EnrollBody.read(request, context)
            let name = try RequestBody.deviceName(try body.string("deviceName"))
            let ticket = try await service.enrolling.enroll(account, passphrase: try body.secret("passphrase"), deviceName: name,
                                                  identityToken: body.optional("identityToken"))
            return try APIResponse.json(.pending, EnrollAnswer(deviceId: ticket.deviceID, pairingCode: ticket.pairingCode, since: ticket.since),
                                        retryAfter: PendingBody.retrySeconds)
        }
        // An account this device held on its own: its circle founded on the relay (PROTOCOL.md, "Founding later").
        routes.on(.post, account: "/circle", permission: .create) { request, context, account in
            let buffer = try await request.body.collect(upTo: context.maxUploadSize)
            var token: String?
            if buffer.readableBytes > 0 {
                guard let body = try? JSONDecoder().decode(FoundBody.self, from: Data(buffer: buffer)) else {
                    throw Refusal.invalid("the body must be a JSON object: \(FoundBody.shape)")
                }
                token = body.identityToken
            }
            return try APIResponse.ready(AccountBody(account: try await service.founding.foundCircle(account, identityToken: token)))
        }
        // Before a sign-in that creates or joins the account: either permission may ask.
        routes.on(.post, account: "/identity-nonce", permission: .enroll, orPermission: .create) { _, _, account in
            try APIResponse.ready(IdentityNonceBody(account: account.rawValue, nonce: await service.identityNonce(account)))
        }
        routes.on(.get, account: "/enrollments", permission: .approve) { _, _, account in
            try APIResponse.ready(EnrollmentsBody(enrollments: try service.enrolling.enrollments(account)))
        }
        routes.on(.post, account: "/enrollments/{deviceId}/approve", permission: .approve) { request, context, account in
            let body = try await RequestBody.decode(ApproveBody.self, shape: ApproveBody.shape, from: request, context: context)
            let deviceID: DeviceID = try GuardedRouter.id("deviceId", context)
            let code = body.pairingCode.filter { $0 != "-" && $0 != " " }
            guard code.utf8.count == 6, code.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else {
                throw Refusal.invalid("a pairing code is the 6 digits the new device shows")
            }
            let name = try await service.enrolling.approve(account, deviceID: deviceID, pairingCode: code)
            return try APIResponse.ready(ApprovedBody(deviceId: deviceID, deviceName: name))
        }
        routes.on(.post, account: "/enrollments/{deviceId}/dismiss", permission: .approve) { _, context, account in
            let deviceID: DeviceID = try GuardedRouter.id("deviceId", context)
            try await service.enrolling.dismissEnrollment(account, deviceID: deviceID)
            return try APIResponse.ready(DismissedBody(account: account.rawValue, deviceId: deviceID))
        }
        routes.on(.get, account: "/devices", permission: .status) { _, _, account in
            try APIResponse.ready(DevicesBody(devices: try service.enrolling.devices(account)))
        }
        routes.on(.post, account: "/rotate", permission: .rotate) { request, context, account in
            // An empty body means the default, after-acks.
            let buffer = try await request.body.collect(upTo: context.maxUploadSize)
            var promotion = Rotations.Promotion.afterAcks
            if buffer.readableBytes > 0 {
                guard let body = try? JSONDecoder().decode(RotateBody.self, from: Data(buffer: buffer)) else {
                    throw Refusal.invalid("the body must be a JSON object: \(RotateBody.shape)")
                }
                if let raw = body.promote {
                    guard let value = Rotations.Promotion(rawValue: raw) else { throw Refusal.invalid("'promote' must be \"after-acks\" or \"now\"") }
                    promotion = value
                }
            }
            let result = try await service.rotations.rotate(account, promotion: promotion)
            return try APIResponse.ready(RotatedBody(result))
        }
        routes.on(.delete, account: "/devices/{deviceId}", permission: .revoke) { _, context, account in
            let deviceID: DeviceID = try GuardedRouter.id("deviceId", context)
            let rotation = try await service.rotations.revoke(account, deviceID: deviceID)
            return try APIResponse.ready(RevokedBody(deviceId: deviceID, rotatedTo: rotation?.generation))
        }
        routes.on(.delete, account: "", permission: .delete) { request, _, account in
            let raw = request.uri.queryParameters.get("everywhere") ?? "false"
            guard raw == "true" || raw == "false" else { throw Refusal.invalid("everywhere must be true or false") }
            try await service.exports.delete(account, everywhere: raw == "true")
            return try APIResponse.ready(DeletedBody(account: account.rawValue, everywhere: raw == "true"))
        }
        routes.on(.get, account: "/export", permission: .export) { _, _, account in
            try APIResponse.ready(ExportBody(export: try service.exports.export(account)))
        }
        routes.on(.get, account: "/events", permission: .subscribe) { request, context, account in
            _ = try service.existing(account)
            let events = service.hub.events(account, after: EventStream.lastEventID(request))
            return EventStream.response(events, held: context.connection.hold(.eventStream, account: account, needs: [.subscribe]))
        }

        let envelopes = EnvelopeHandler(service: service, audit: audit)
        routes.on(.post, account: "/seal", permission: .seal) { request, context, account in
            try await envelopes.seal(request, context, account)
        }
        routes.on(.post, account: "/open", permission: .seal) { request, context, account in
            try await envelopes.open(request, context, account)
        }

        let keys = KeyReadHandler(service: service, audit: audit, metrics: metrics)
        routes.on(.get, account: "/keys/id/{keyId}", permission: .read) { request, context, account in
            let id: KeyID = try GuardedRouter.id("keyId", context)
            return try await keys.read(request, context, account, .keyID(id))
        }
        routes.on(.get, account: "/keys/{selector}", permission: .read) { request, context, account in
            let raw = try GuardedRouter.parameter("selector", context)
            let selector: KeySelector
            if raw == "current" {
                selector = .current
            } else if raw.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let number = Int(raw).flatMap({ Generation($0) }) {
                selector = .generation(number)
            } else {
                throw Refusal.invalid("a key is read as keys/current, keys/GENERATION (a number from 1) or keys/id/KEYID")
            }
            return try await keys.read(request, context, account, selector)
        }
    }
}

struct EnrollAnswer: Encodable {
    var state = ContractState.pending
    var reason = KeyAvailability.PendingReason.awaitingApproval.rawValue
    var deviceId: DeviceID
    /// null until a trusted device has answered; enroll again to see it.
    var pairingCode: String?
    var since: Date
    var retryAfter = PendingBody.retrySeconds
}

/// The kit is encrypted under the kit passphrase; it is still worth guarding like a key.
struct KitBody: Encodable {
    var state = ContractState.ready
    var account: String
    var kit: String
    /// The kit's member of the circle (absent: the kit restores keys only).
    var memberDeviceId: DeviceID?
}

/// An import's answer: the account, and what the kit restored (into its circle, or keys only, and why).
struct ImportedBody: Encodable {
    var state = ContractState.ready
    var account: AccountStatus
    var restored: String
}

struct DeletedBody: Encodable {
    var state = ContractState.ready
    var account: String
    var everywhere: Bool
}

struct ExportBody: Encodable {
    var state = ContractState.ready
    var export: Exports.AccountExport
}

struct RotatedBody: Encodable {
    var state = ContractState.ready
    var generation: Generation
    var keyId: KeyID
    var promoted: Bool
    var devices: [DeviceID]
    /// The relay was unreachable: stored and served here, announced once it is back.
    var queued: Bool
    var note: String?

    init(_ r: Rotations.RotationResult) {
        generation = r.generation
        keyId = r.keyId
        promoted = r.promoted
        devices = r.devices
        queued = r.queued
        note = r.note
    }
}

struct DismissedBody: Encodable {
    var state = ContractState.ready
    var account: String
    var deviceId: DeviceID
    var dismissed = true
}

struct RevokedBody: Encodable {
    var state = ContractState.ready
    var deviceId: DeviceID
    /// The generation the revocation rotated to, if the policy rotates on revoke.
    var rotatedTo: Generation?
}

struct EnrollmentsBody: Encodable {
    var state = ContractState.ready
    var enrollments: [Enrollments.EnrollmentListing]
}

struct IdentityNonceBody: Encodable {
    var state = ContractState.ready
    var account: String
    var nonce: String
}

struct ApprovedBody: Encodable {
    var state = ContractState.ready
    var deviceId: DeviceID
    var deviceName: String
}

struct DevicesBody: Encodable {
    var state = ContractState.ready
    var devices: [Enrollments.DeviceListing]
}

struct HealthBody: Encodable {
    var state = ContractState.ready
    var version: String
}

struct StatusBody: Encodable {
    var state = ContractState.ready
    var version: String
    /// nil for a device with no relay.
    var relay: RelayStatus?
    var accounts: [AccountStatus]
    var lockedMemory = LockedMemoryStatus.current()
}

struct AccountBody: Encodable {
    var state = ContractState.ready
    var account: AccountStatus
}

extension Array {
    /// nil for an empty array: a list the answer omits when it has nothing.
    var nilIfEmpty: [Element]? { isEmpty ? nil : self }
}
