import NIOCore
import Testing
@testable import KeyVaultRelayService

/// PROXY protocol version 2 headers as the relay reads them from a trusted proxy (issue 33, item 6).
@Suite("Relay service: PROXY protocol version 2 headers")
struct ProxyHeaderTests {
    static let signature: [UInt8] = [0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A]

    static func v4(_ client: [UInt8]) -> [UInt8] {
        signature + [0x21, 0x11, 0x00, 0x0C] + client + [127, 0, 0, 1] + [0x9C, 0x40, 0x1F, 0x90]
    }

    @Test("whole, partial, wrong, LOCAL, IPv6, too long; what follows the header is not part of it")
    func parse() {
        let v4 = Self.v4([192, 0, 2, 7])
        #expect(ProxyHeaderV2.parse(v4) == .header(length: 28, client: "192.0.2.7"))
        #expect(ProxyHeaderV2.parse(v4 + Array("GET / HTTP/1.1\r\n".utf8)) == .header(length: 28, client: "192.0.2.7"))
        #expect(ProxyHeaderV2.parse(v4.prefix(20)) == .needMore)
        #expect(ProxyHeaderV2.parse(v4.prefix(5)) == .needMore)
        #expect(ProxyHeaderV2.parse([UInt8]()) == .needMore)
        if case .invalid = ProxyHeaderV2.parse(Array("GET / HTTP/1.1\r\n".utf8)) {} else { Issue.record("HTTP taken as a header") }
        if case .invalid = ProxyHeaderV2.parse(Array("PROXY TCP4 1.2.3.4 5.6.7.8 1 2\r\n".utf8)) {} else { Issue.record("version 1 taken") }
        var local = v4
        local[12] = 0x20
        #expect(ProxyHeaderV2.parse(local) == .header(length: 28, client: nil))
        var wrongVersion = v4
        wrongVersion[12] = 0x11
        if case .invalid = ProxyHeaderV2.parse(wrongVersion) {} else { Issue.record("version 1 binary taken") }
        var long = v4
        long[14] = 0xFF
        if case .invalid = ProxyHeaderV2.parse(long) {} else { Issue.record("a 64 KiB header taken") }
        var short = v4
        short[15] = 4
        if case .invalid = ProxyHeaderV2.parse(short) {} else { Issue.record("IPv4 without room for its addresses taken") }
        let v6 = Self.signature + [0x21, 0x21, 0x00, 36] + [0x20, 0x01, 0x0d, 0xb8] + Array(repeating: 0, count: 11) + [1]
            + Array(repeating: 0, count: 16) + [0, 1, 0, 2]
        #expect(ProxyHeaderV2.parse(v6) == .header(length: 52, client: "2001:db8::1"))
        let unspec = Self.signature + [0x21, 0x00, 0x00, 0x00]
        #expect(ProxyHeaderV2.parse(unspec) == .header(length: 16, client: nil))
    }

    @Test("trusted peers: CIDR blocks of either family")
    func trusted() throws {
        let peers = try TrustedPeers(["10.0.0.0/8", "127.0.0.1", "fd00::/8"])
        #expect(peers.contains(try .init(ipAddress: "10.2.3.4", port: 1)))
        #expect(peers.contains(try .init(ipAddress: "127.0.0.1", port: 1)))
        #expect(!peers.contains(try .init(ipAddress: "127.0.0.2", port: 1)))
        #expect(!peers.contains(try .init(ipAddress: "11.0.0.1", port: 1)))
        #expect(peers.contains(try .init(ipAddress: "fd12::1", port: 1)))
        #expect(!peers.contains(try .init(ipAddress: "fe80::1", port: 1)))
        #expect(throws: (any Error).self) { try TrustedPeers(["10.0.0.0/33"]) }
        #expect(throws: (any Error).self) { try TrustedPeers(["not-an-address"]) }
    }
}
