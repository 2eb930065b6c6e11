import FoundationEssentials

/// An event of an account (docs/API.md, "Events"): `key-ready`, `rotated`,
/// `device-enrolled`, `device-revoked`, `pairing-failed`, `locked`,
/// `unlocked`, or `resync`: events may have been missed (the daemon
/// restarted, or the client was away too long), so read the state again.
public struct AccountEvent: Sendable, Equatable {
    /// The stream's id for it: what a stream resumed later starts after.
    public var id: String?
    public var name: String
    /// Every field as text (a generation's number too: "2").
    public var fields: [String: String]
    /// The fields that are numbers on the wire, as numbers (`generation`).
    public var numbers: [String: Int] = [:]

    /// The generation a `key-ready` or `rotated` event names.
    public var generation: Int? { numbers["generation"] }
}

/// An account's events as they happen, for as long as the caller iterates.
///
/// A dropped connection (the daemon restarting, say) is made again, resuming
/// after the last event seen (`Last-Event-ID`), so no event is lost without a
/// `resync` saying so. The sequence ends by throwing a `Refusal` (the account
/// is unknown, or the policy no longer lets the caller follow it), a
/// `KeyVaultClientError` about the socket's peer, or one saying the first
/// connection could not be made; never by a connection dropped later.
public struct AccountEvents: AsyncSequence, Sendable {
    public typealias Element = AccountEvent

    let client: KeyVaultClient
    let account: String
    let lastEventID: String?

    public func makeAsyncIterator() -> AsyncThrowingStream<AccountEvent, any Error>.Iterator {
        // Bounded, keeping the oldest: an event that does not fit is not taken, and the stream
        // resumes after the last one taken (the daemon replays the rest, or says resync).
        let (stream, continuation) = AsyncThrowingStream<AccountEvent, any Error>.makeStream(bufferingPolicy: .bufferingOldest(256))
        let follow = Task { [client, account, lastEventID] in
            do {
                try await Self.follow(client: client, account: account, after: lastEventID) { event in
                    if case .enqueued = continuation.yield(event) { return true }
                    return false
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in follow.cancel() }
        return stream.makeAsyncIterator()
    }

    private static func follow(client: KeyVaultClient, account: String, after lastEventID: String?,
                               yield: (AccountEvent) -> Bool) async throws {
        var last = lastEventID
        var pause = Duration.milliseconds(100)
        var connectedOnce = false
        while !Task.isCancelled {
            do {
                let headers = last.map { [("Last-Event-ID", $0)] } ?? []
                let request = try DaemonRequest("GET", KeyVaultClient.accountPath(account) + "/events", headers: headers, body: nil)
                var stream = try await client.exchange(request, timeout: .seconds(10))
                // A stream holds its connection to the end, and leaves it closed: it is never kept.
                defer { stream.connection.close() }
                guard stream.head.status == .ok else {
                    let body = try await stream.collect(upTo: KeyVaultClient.maxAnswerBytes)
                    let answer = try Answers.decode(DaemonResponse(status: Int(stream.head.status.code), headers: [], body: body), Answers.NoFields.self) { _ in () }
                    if case .refused(let refusal) = answer { throw refusal }
                    throw KeyVaultClientError.malformedAnswer("the event stream answered HTTP \(stream.head.status.code)")
                }
                pause = .milliseconds(100)
                connectedOnce = true
                var parser = ServerSentEventParser()
                reading: while let chunk = try await stream.nextChunk() {
                    for event in try parser.feed(chunk.readableBytesView) {
                        let (fields, numbers) = Self.fields(event.data)
                        if event.name == "forbidden" {
                            throw Refusal(state: .forbidden, message: fields["error"] ?? "the policy no longer allows following this account", retryAfter: nil)
                        }
                        // The caller is behind: this connection is left, and the next resumes after the last event taken.
                        guard yield(AccountEvent(id: event.id, name: event.name, fields: fields, numbers: numbers)) else { break reading }
                        if let id = event.id { last = id }
                    }
                }
            } catch let error as Refusal {
                throw error
            } catch is CancellationError {
                return
            } catch let error as KeyVaultClientError where error.refusesThePeer || !connectedOnce {
                // A socket that is not the daemon's is met again on every try; and one never reached
                // (a wrong path, a daemon not running) is for the caller to hear.
                throw error
            } catch {
                // The daemon went away (or is not back yet): try again, less often while it stays away.
            }
            try? await Task.sleep(for: pause)
            pause = Swift.min(pause * 2, .seconds(2))
        }
    }

    /// `data:` is one JSON object: every value as text, and the whole numbers among them as numbers too.
    private static func fields(_ data: String) -> (text: [String: String], numbers: [String: Int]) {
        guard let object = try? JSONDecoder().decode([String: EventValue].self, from: Data(data.utf8)) else { return ([:], [:]) }
        return (object.compactMapValues(\.text), object.compactMapValues(\.number))
    }
}

/// One value of an event's `data:` object, by its JSON type (not through NSNumber, which
/// may read `true` as 1): only a whole number is a number.
private enum EventValue: Decodable {
    case text(String)
    case number(Int)
    case other(String?)

    init(from decoder: any Decoder) throws {
        let value = try decoder.singleValueContainer()
        if let text = try? value.decode(String.self) {
            self = .text(text)
        } else if let number = try? value.decode(Int.self) {
            self = .number(number)
        } else if let flag = try? value.decode(Bool.self) {
            self = .other(String(flag))
        } else {
            self = .other((try? value.decode(Double.self)).map { String($0) })
        }
    }

    var text: String? {
        switch self {
        case .text(let text): return text
        case .number(let number): return String(number)
        case .other(let text): return text
        }
    }

    var number: Int? {
        if case .number(let number) = self { return number }
        return nil
    }
}
