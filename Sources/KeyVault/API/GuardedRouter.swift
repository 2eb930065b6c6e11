import Foundation
import Hummingbird
import HTTPTypes
import KeyVaultIDs
import KeyVaultProtocol
import KeyVaultAccount
import KeyVaultEngine
import KeyVaultPolicy

/// Every route is registered with the permission it needs, so no handler can
/// forget the policy check. Routes under `/v1/accounts/{user}` get the account
/// ID validated first and checked against the policy's account patterns.
struct GuardedRouter {
    let router: Router<VaultRequestContext>
    let policy: PolicyStore

    typealias GlobalHandler = @Sendable (Request, VaultRequestContext) async throws -> Response
    typealias AccountHandler = @Sendable (Request, VaultRequestContext, AccountID) async throws -> Response

    func on(_ method: HTTPRequest.Method, _ path: String, permission: Permission, _ handler: @escaping GlobalHandler) {
        let policy = self.policy
        router.on(RouterPath(path), method: method) { request, context in
            try Self.authorize(policy, context, permission, account: nil)
            // The caller, for the turns KDF runs take (`KDFRunner`).
            return try await KDFRunner.$caller.withValue(context.peer?.uid) { try await handler(request, context) }
        }
    }

    func on(_ method: HTTPRequest.Method, account path: String, permission: Permission, _ handler: @escaping AccountHandler) {
        let policy = self.policy
        router.on(RouterPath("/v1/accounts/{user}" + path), method: method) { request, context in
            let account = try Self.account(from: context)
            try Self.authorize(policy, context, permission, account: account)
            return try await KDFRunner.$caller.withValue(context.peer?.uid) { try await handler(request, context, account) }
        }
    }

    /// A route either of two permissions opens.
    func on(_ method: HTTPRequest.Method, account path: String, permission: Permission, orPermission other: Permission, _ handler: @escaping AccountHandler) {
        let policy = self.policy
        router.on(RouterPath("/v1/accounts/{user}" + path), method: method) { request, context in
            let account = try Self.account(from: context)
            if (try? Self.authorize(policy, context, other, account: account)) == nil {
                try Self.authorize(policy, context, permission, account: account)
            }
            return try await KDFRunner.$caller.withValue(context.peer?.uid) { try await handler(request, context, account) }
        }
    }

    static func account(from context: VaultRequestContext) throws -> AccountID {
        let raw = try parameter("user", context)
        do throws(InvalidInput) {
            return try AccountID(validating: raw)
        } catch {
            throw Refusal.invalid(error.message)
        }
    }

    /// A path segment captured by the route, percent-decoded (Hummingbird hands it over as sent).
    static func parameter(_ name: String, _ context: VaultRequestContext) throws -> String {
        let raw = context.parameters.get(name) ?? ""
        guard let decoded = raw.removingPercentEncoding else {
            throw Refusal.invalid("a path segment has a malformed percent-encoding (% must be followed by two hex digits of UTF-8)")
        }
        return decoded
    }

    /// A device or key ID in the path: parsed here, once, or refused.
    static func id<Kind>(_ name: String, _ context: VaultRequestContext) throws -> ID16<Kind> {
        guard let id = ID16<Kind>(hex: try parameter(name, context)) else {
            throw Refusal.invalid("\(Kind.name) is 32 lowercase hex characters")
        }
        return id
    }

    static func authorize(_ policy: PolicyStore, _ context: VaultRequestContext, _ permission: Permission, account: AccountID?) throws {
        // ContractMiddleware has refused requests without credentials.
        guard let peer = context.peer else { throw Refusal(.forbidden, "the caller's credentials could not be read") }
        guard policy.current.allows(peer, permission, account: account) else {
            let scope = account.map { " on account \($0)" } ?? ""
            throw Refusal(.forbidden, "uid \(peer.uid) may not \(permission.rawValue)\(scope) under this daemon's policy")
        }
    }
}
