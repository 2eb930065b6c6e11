import Foundation
import Testing
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultRelay
#if canImport(Glibc)
import Glibc
#endif

/// Issue 33, item 6: behind a TLS terminator every connection came from one address,
/// so one tenant's 512 held reads locked everyone out. The relay takes PROXY protocol
/// version 2 from trusted peers (`--proxy-protocol-from`), so its per-address budgets
/// key on the real client, and an account holds at most 32 reads at once.
@Suite("Relay service: PROXY protocol from a trusted terminator", .serialized)
struct ProxyProtocolTests {
    /// A version 2 PROXY header, TCP over IPv4, naming `client` as the source.
    static func header(client: [UInt8], port: UInt16 = 40000) -> [UInt8] {
        let signature: [UInt8] = [0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A]
        return signature + [0x21, 0x11, 0x00, 0x0C] + client + [127, 0, 0, 1] + [UInt8(port >> 8), UInt8(port & 0xFF), 0x1F, 0x90]
    }

    static func heldRead(_ account: String, as device: TestDevice, after: RelayCursor = .start, wait: Int) -> [UInt8] {
        let path = "/v1/accounts/\(account)/records", query = "after=\(after)&limit=10&wait=\(wait)"
        let headers = device.signedHeaders(method: "GET", path: path, query: query, body: [])
        return Array(("GET \(path)?\(query) HTTP/1.1\r\nHost: relay\r\n" + headers.map { "\($0.0): \($0.1)\r\n" }.joined() + "\r\n").utf8)
    }

    @Test("600 held reads of one tenant through the proxy leave another tenant's reads alone; no header from a trusted peer is refused")
    func oneTenantCannotLockOutAnother() async throws {
        try await RelayServiceFixture.with(.sqlite, arguments: ["--proxy-protocol-from", "127.0.0.1/32", "--metrics-listen", "127.0.0.1:0"]) { f in
            // The fixture's own requests come from 127.0.0.1 without a header: refused, so the accounts are made
            // through a relay that trusts no proxy, on the same store.
            let plain = try await RelayServiceProcess.start(store: f.storeAddress, issuer: f.issuer, root: f.root, name: "plain")
            defer { plain.remove() }
            let (tenant, _) = try await f.createAccount("tenant", on: plain)
            let (other, _) = try await f.createAccount("other", on: plain)

            // Without a header, a trusted peer's connection is closed unanswered.
            let bare = try RawSocket(tcpPort: f.a.port)
            #expect(bare.send(Self.heldRead("other", as: other, wait: 0)))
            #expect(try await bare.readToEOF(timeout: .seconds(5)), "a connection without a PROXY header stayed open")
            #expect(bare.response == nil, "a connection without a PROXY header was answered")

            // One tenant: 600 held reads (after its last row, so each waits), all from 10.0.0.1 as the proxy says.
            let last = try #require(try await plain.rows("tenant", as: tenant).last?.cursor)
            var held: [RawSocket] = []
            for index in 0..<600 {
                let socket = try RawSocket(tcpPort: f.a.port)
                _ = socket.send(Self.header(client: [10, 0, 0, 1], port: UInt16(20000 + index)) + Self.heldRead("tenant", as: tenant, after: last, wait: 30))
                held.append(socket)
            }
            defer { held.removeAll() }
            // The tenant's share of held reads is full: the flood is on (the rest of it may still be arriving).
            try await eventually { try await f.a.metric("keyvault_relay_held_reads") == 32 }

            // Another tenant, from another client behind the same proxy: answered, every time.
            var statuses: [Int] = []
            for attempt in 0..<5 {
                let socket = try RawSocket(tcpPort: f.a.port)
                #expect(socket.send(Self.header(client: [10, 0, 0, 2], port: UInt16(30000 + attempt)) + Self.heldRead("other", as: other, wait: 0)))
                statuses.append(try await socket.readResponse(timeout: .seconds(10))?.status ?? -1)
            }
            #expect(statuses == [200, 200, 200, 200, 200], "the other tenant's reads: \(statuses)")

            // The tenant's reads past 32 held answered at once with an empty page (or were closed past 512).
            var answeredAtOnce = 0
            for socket in held.prefix(100) where (try? await socket.readResponse(timeout: .milliseconds(50)))??.status == 200 {
                answeredAtOnce += 1
            }
            #expect(answeredAtOnce >= 60, "only \(answeredAtOnce) of the tenant's first 100 reads were answered at once")
            await plain.stop()
        }
    }
}
