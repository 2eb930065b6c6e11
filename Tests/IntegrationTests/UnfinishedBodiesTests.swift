import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("Relay service: unfinished bodies", .serialized)
struct UnfinishedBodiesTests {
    /// 2,000 connections from another address, each sending the head of a 1 MiB body and
    /// then half of it, held open: the relay's memory stays bounded, a body announced over
    /// the limit is answered 413 at once, and a genuine device's rotation still arrives.
    @Test("many unfinished bodies pin bounded memory, and a rotation still arrives")
    func unfinishedBodies() async throws {
        let circle = try await Circle(.service)
        defer { circle.remove() }
        let a = try await circle.device()
        let b = try await circle.device()
        #expect(try await a.request("POST", "/v1/accounts", json: ["user": "pin", "passphrase": "pa"]).status == 200)
        try await circle.enroll(b, into: "pin", approver: a, name: "b")
        #expect(try await b.request("GET", "/v1/accounts/pin/keys/1?wait=20").status == 200)

        let relay = circle.store.services[0]
        let before = try #require(residentKiB(of: relay.process.pid))
        // The attacker writes from 127.0.0.2, an address of its own on this machine.
        let report = circle.root + "/pin.out"
        let attacker = try ChildProcess("/usr/bin/python3", ["-c", """
            import socket, sys, time, resource
            port = int(sys.argv[1])
            soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            head = b"POST /v1/accounts/pin/records HTTP/1.1\\r\\nHost: x\\r\\nContent-Type: application/json\\r\\nContent-Length: 1048576\\r\\n\\r\\n"
            half = b"x" * 524288
            held, refused = [], 0
            for _ in range(2000):
                s = socket.socket(); s.bind(("127.0.0.2", 0))
                try:
                    s.connect(("127.0.0.1", port)); s.sendall(head); s.setblocking(False)
                    try: s.send(half)
                    except OSError: pass
                    held.append(s)
                except OSError:
                    refused += 1; s.close()
            # Announced over the limit: answered 413 before any of it is sent.
            t = socket.create_connection(("127.0.0.1", port), source_address=("127.0.0.2", 0))
            t.sendall(b"POST /v1/accounts/pin/records HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: 4294967296\\r\\n\\r\\n")
            t.settimeout(10)
            early = t.recv(4096).split(b"\\r\\n")[0].decode()
            print(len(held), refused, early, flush=True)
            time.sleep(20)
            """, String(relay.port)], stdoutPath: report, stderrPath: report)
        defer { attacker.signal(SIGKILL) }
        try await eventually { ((try? String(contentsOfFile: report, encoding: .utf8)) ?? "").contains("HTTP/1.1") }
        let said = try String(contentsOfFile: report, encoding: .utf8)
        #expect(said.contains("HTTP/1.1 413"), "\(said)")

        // While they are held, a rotation reaches the other device.
        let rotated = try await a.request("POST", "/v1/accounts/pin/rotate", json: ["promote": "now"])
        #expect(rotated.status == 200, "\(rotated.object)")
        let generation = try #require(rotated.object["generation"] as? Int)
        #expect(try await b.request("GET", "/v1/accounts/pin/keys/\(generation)?wait=30").status == 200)
        let during = try #require(residentKiB(of: relay.process.pid))
        // 2,000 half bodies are 1 GiB; one address may hold 16 MiB of bodies in flight.
        #expect(during - before < 160 * 1024, "the relay grew from \(before) KiB to \(during) KiB")
        attacker.signal(SIGKILL)
        _ = await attacker.wait()
    }
}
