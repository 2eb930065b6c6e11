@testable import KeyVault
@testable import KeyVaultEngine
@testable import KeyVaultPolicy
import NIOCore
import NIOEmbedded
import Testing

/// The limiter ranks idle connections by when the server accepted them, not by when
/// their own event loop set them up (`HostileClientTests.connectionFlood` lost a
/// client's connection to a flood accepted before it but set up after it).
@Suite("ConnectionLimiter: idle since accepted")
struct ConnectionLimiterOrderTests {
    /// The daemon's own uid (no share: every place is its to use).
    static let peer = PeerCredentials(uid: 1000, gid: 1000, pid: 1)

    @Test("connections set up after a newer one make room among themselves, and the newest stays")
    func setUpOutOfOrder() throws {
        let limiter = ConnectionLimiter(limit: 2, uncappedUID: Self.peer.uid)
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
        let limiter = ConnectionLimiter(limit: 2, uncappedUID: Self.peer.uid)
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
        let limiter = ConnectionLimiter(limit: 2, uncappedUID: Self.peer.uid)
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

    @Test("a connection accepted before a kept one became idle takes the kept one's place (its client reconnects); never a fresh one's")
    func keptGivesWay() {
        let limiter = ConnectionLimiter(limit: 2, uncappedUID: Self.peer.uid)
        let old = EmbeddedChannel(), kept = EmbeddedChannel(), fresh = EmbeddedChannel()
        let keptConnection = Connection(), freshConnection = Connection(), oldConnection = Connection()
        limiter.accepted(old)
        limiter.accepted(kept)
        #expect(limiter.admit(kept, keptConnection, peer: Self.peer) == .admitted)
        limiter.accepted(fresh)
        #expect(limiter.admit(fresh, freshConnection, peer: Self.peer) == .admitted)
        // The kept connection carries a request and is idle again, after `old` was accepted.
        limiter.setBusy(kept, true)
        limiter.setBusy(kept, false)
        #expect(limiter.admit(old, oldConnection, peer: Self.peer) == .admitted)
        #expect(Set(limiter.connections.map(ObjectIdentifier.init)) == [ObjectIdentifier(freshConnection), ObjectIdentifier(oldConnection)])
        #expect(limiter.counts.evictedTotal == 1)
    }

    @Test("another uid holds at most three quarters of the places, and never every place while there are two")
    func shareOfSmallLimits() {
        #expect([1, 2, 3, 4, 8, 1024].map { ConnectionLimiter(limit: $0).perPeerLimit } == [1, 1, 2, 3, 6, 768])
    }

    @Test("a connection closed is forgotten with when it was accepted")
    func acceptedForgottenAtClose() throws {
        let limiter = ConnectionLimiter(limit: 2, uncappedUID: Self.peer.uid)
        let channel = EmbeddedChannel()
        limiter.accepted(channel)
        #expect(limiter.acceptedWaiting == 1)
        _ = try channel.finish()
        #expect(limiter.acceptedWaiting == 0)
    }
}
