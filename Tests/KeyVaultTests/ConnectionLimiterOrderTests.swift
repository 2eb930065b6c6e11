@testable import KeyVault
import NIOCore
import NIOEmbedded
import Testing

/// The limiter ranks idle connections by when the server accepted them, not by when
/// their own event loop set them up (`HostileClientTests.connectionFlood` lost a
/// client's connection to a flood accepted before it but set up after it).
@Suite("ConnectionLimiter: idle since accepted")
struct ConnectionLimiterOrderTests {
    static let peer = PeerCredentials(uid: 1000, gid: 1000, pid: 1)

    @Test("connections set up after a newer one make room among themselves, and the newest stays")
    func setUpOutOfOrder() throws {
        let limiter = ConnectionLimiter(limit: 2)
        let flood = (0..<3).map { _ in EmbeddedChannel() }
        let client = EmbeddedChannel()
        for channel in flood + [client] { limiter.accepted(channel) }

        let clientConnection = Connection()
        let floodConnections = flood.map { _ in Connection() }
        #expect(limiter.admit(client, clientConnection, peer: Self.peer) == .admitted)
        for (channel, connection) in zip(flood, floodConnections) {
            #expect(limiter.admit(channel, connection, peer: Self.peer) == .admitted)
        }
        // Each of the later two took the place of the flood connection accepted before it, never the client's.
        #expect(Set(limiter.connections.map(ObjectIdentifier.init)) == [ObjectIdentifier(clientConnection), ObjectIdentifier(floodConnections[2])])
        #expect(limiter.counts.evictedTotal == 2)
    }

    @Test("a connection accepted before every idle one finds no room by closing another: it is the one closed")
    func oldestGivesWay() {
        let limiter = ConnectionLimiter(limit: 2)
        let old = EmbeddedChannel()
        limiter.accepted(old)
        let newer = (0..<2).map { _ in EmbeddedChannel() }
        let connections = newer.map { _ in Connection() }
        for (channel, connection) in zip(newer, connections) {
            limiter.accepted(channel)
            #expect(limiter.admit(channel, connection, peer: Self.peer) == .admitted)
        }
        #expect(limiter.admit(old, Connection(), peer: Self.peer) == .dropped)
        #expect(Set(limiter.connections.map(ObjectIdentifier.init)) == Set(connections.map(ObjectIdentifier.init)))
        #expect(limiter.counts.evictedTotal == 1)
    }

    @Test("a connection that became idle after another was accepted is the older of the two idle")
    func idleAfterAcceptance() {
        let limiter = ConnectionLimiter(limit: 2)
        let first = EmbeddedChannel(), second = EmbeddedChannel(), third = EmbeddedChannel()
        let firstConnection = Connection(), secondConnection = Connection()
        limiter.accepted(first)
        #expect(limiter.admit(first, firstConnection, peer: Self.peer) == .admitted)
        limiter.accepted(second)
        limiter.accepted(third)
        // `first` answers a request and is idle again only after `second` and `third` were accepted.
        limiter.setBusy(first, true)
        limiter.setBusy(first, false)
        #expect(limiter.admit(second, secondConnection, peer: Self.peer) == .admitted)
        #expect(limiter.admit(third, Connection(), peer: Self.peer) == .admitted)
        #expect(limiter.connections.contains { $0 === firstConnection })
        #expect(!limiter.connections.contains { $0 === secondConnection })
    }
}
