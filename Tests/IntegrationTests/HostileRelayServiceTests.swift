import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A relay service is trusted with nothing, the shape of its answers included. One that answers a
/// read with rows that do not move past the cursor asked after (a cursor of Int64.min, the same
/// cursor again, 200,000 rows for 250 asked) is refused: before, the daemon paged the same rows for
/// ever, a rotation never answered, and a stop never ended.
@Suite("A relay service whose answers do not move")
struct HostileRelayServiceTests {
    @Test("rows that do not move past the cursor are refused: a rotation answers and a stop ends", arguments: ["behind", "same", "many"])
    func rowsThatDoNotMove(_ mode: String) async throws {
        let fake = try FakeRelayService(mode: mode)
        defer { fake.stop() }
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        daemon.relay = "http://127.0.0.1:\(try await fake.port())"
        try await daemon.start()
        let created = try await daemon.request("POST", "/v1/accounts", json: ["user": "u1", "passphrase": "pw", "identityToken": "a.b.c"])
        #expect(created.status == 200, "\(created.object)")
        let rotated = try await daemon.request("POST", "/v1/accounts/u1/rotate", json: ["promote": "now"])
        #expect(rotated.status == 200, "\(rotated.object)")
        #expect(await daemon.stop() == 0)
        // Refused, and read again only after a back-off: not the same rows asked for in a loop.
        let reads = fake.reads
        #expect(reads > 0 && reads < 100, "\(reads) reads")
    }
}

/// A python3 HTTP server standing in for a relay service: it takes every write and answers every
/// read with rows that `mode` shapes. It prints its port when it listens.
final class FakeRelayService: @unchecked Sendable {
    private let process: ChildProcess
    private let output: String

    init(mode: String) throws {
        var template = Array("/tmp/kvfake-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw TestFailure("mkdtemp failed") }
        output = String(cString: made) + "/out"
        let script = """
            import http.server, json, sys
            MODE, COUNT, READS = sys.argv[1], sys.argv[2], 0
            class H(http.server.BaseHTTPRequestHandler):
                protocol_version = "HTTP/1.1"
                def log_message(self, *a): pass
                def reply(self, body):
                    b = json.dumps(body).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json"); self.send_header("Content-Length", str(len(b)))
                    self.end_headers(); self.wfile.write(b)
                def do_POST(self):
                    self.rfile.read(int(self.headers.get("Content-Length") or 0))
                    if self.path.endswith("/candidates"): return self.reply({"candidate": "00" * 16, "accountExists": False})
                    return self.reply({"stored": 1})
                def do_GET(self):
                    global READS
                    READS += 1
                    open(COUNT, "w").write(str(READS))
                    if MODE == "behind": rows = [{"cursor": -9223372036854775808, "kind": "ack", "body": "AA=="}]
                    elif MODE == "same": rows = [{"cursor": 1, "kind": "ack", "body": "AA=="}]
                    else: rows = [{"cursor": i + 1, "kind": "ack", "body": "AA=="} for i in range(20000)]
                    return self.reply({"rows": rows})
            s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
            print(s.server_address[1], flush=True)
            s.serve_forever()
            """
        process = try ChildProcess("/usr/bin/env", ["python3", "-c", script, mode, output + ".reads"], stdoutPath: output, stderrPath: output + ".err")
    }

    /// How many reads it has answered.
    var reads: Int { (try? String(contentsOfFile: output + ".reads", encoding: .utf8)).flatMap { Int($0) } ?? 0 }

    func port() async throws -> Int {
        var port: Int?
        try await eventually {
            port = (try? String(contentsOfFile: output, encoding: .utf8)).flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            return port != nil
        }
        return try #require(port)
    }

    func stop() {
        process.killAndReap()
        try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: output).deletingLastPathComponent().path)
    }
}
