import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Reading the daemon's answers (docs/API.md, "Answers"): the `state` decides,
/// the HTTP status only follows from it.
enum Answers {
    private struct Head: Decodable {
        var state: String
        var error: String?
        var reason: String?
        var since: String?
        var retryAfter: Int?
        var deviceId: DeviceIdentifier?
        var pairingCode: String?
    }

    /// An answer with no fields past its head that this client reads (an enrollment, an event stream's refusal).
    struct NoFields: Decodable {}

    /// The head, and `Fields` too when the answer is ready, from one reading of the JSON.
    private struct Whole<Fields: Decodable>: Decodable {
        var head: Head
        var fields: Fields?
        var fieldsMissing = false

        init(from decoder: any Decoder) throws {
            head = try Head(from: decoder)
            guard head.state == "ready" else { return }
            do { fields = try Fields(from: decoder) } catch { fieldsMissing = true }
        }
    }

    /// Reads an answer: its state, and when it is `ready`, `Fields` (in the same pass over the
    /// JSON: on the key read's path, a second pass cost as much as the first), given to `ready`.
    static func decode<Fields: Decodable, Value>(_ response: DaemonResponse, _: Fields.Type,
                                                 ready: (inout Fields) throws -> Value) throws -> DaemonAnswer<Value> {
        var body = Data(response.body)
        defer { body.withUnsafeMutableBytes(Wipe.bytes) }
        var whole: Whole<Fields>
        do {
            whole = try JSONDecoder().decode(Whole<Fields>.self, from: body)
        } catch {
            throw KeyVaultClientError.malformedAnswer("HTTP \(response.status) with a body that is not a JSON answer")
        }
        let head = whole.head
        switch head.state {
        case "ready":
            // Taken out, so `ready` holds the only copy (a key's bytes are wiped in place).
            guard var fields = whole.fields.take(), !whole.fieldsMissing else {
                throw KeyVaultClientError.malformedAnswer("a ready answer without the fields it must have")
            }
            do {
                return .ready(try ready(&fields))
            } catch let error as KeyVaultClientError {
                throw error
            } catch {
                throw KeyVaultClientError.malformedAnswer("a ready answer without the fields it must have")
            }
        case "pending":
            let retry = head.retryAfter ?? response.header("Retry-After").flatMap(Int.init) ?? 1
            return .pending(Pending(reason: .init(head.reason ?? ""), since: head.since.flatMap(date), retryAfter: .seconds(max(retry, 0)),
                                    deviceID: head.deviceId, pairingCode: head.pairingCode))
        default:
            guard let state = Refusal.State(rawValue: head.state) else {
                throw KeyVaultClientError.malformedAnswer("an unknown state '\(head.state.prefix(40))'")
            }
            let retry = response.header("Retry-After").flatMap(Int.init).map { Duration.seconds($0) }
            return .refused(Refusal(state: state, message: head.error ?? "HTTP \(response.status)", retryAfter: retry))
        }
    }

    /// A `ready` key read's fields.
    struct KeyFields: Decodable {
        var account: String
        var generation: Int
        var keyId: KeyIdentifier
        var key: Data
        var createdAt: String?
        var current: Bool
    }

    /// A `ready` key read. The key's bytes go from the body into `KeyBytes`,
    /// and the copies this code made are wiped (the body, its buffer, the decoded
    /// bytes); JSONDecoder's own transient copy of the text is beyond reach.
    static func key(_ wire: inout KeyFields) throws -> AccountKey {
        defer { wire.key.withUnsafeMutableBytes(Wipe.bytes) }
        guard wire.key.count == 32 else { throw KeyVaultClientError.malformedAnswer("a key of \(wire.key.count) bytes, not 32") }
        let bytes = wire.key.withUnsafeBytes { KeyBytes(copying: $0) }
        return AccountKey(account: wire.account, generation: wire.generation, keyID: wire.keyId, bytes: bytes,
                          createdAt: wire.createdAt.flatMap(date), isCurrent: wire.current)
    }

    /// The daemon's times: ISO 8601 in UTC, with milliseconds.
    static func date(_ text: String) -> Date? {
        (try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text)) ?? (try? Date.ISO8601FormatStyle().parse(text))
    }
}
