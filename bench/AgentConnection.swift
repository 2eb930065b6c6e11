import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// ssh-agent (started for the run, with no keys) and one connection kept to it: the
/// floor for a round trip over a Unix socket to a daemon that holds keys.
final class AgentConnection {
    private let agent: Process
    private let descriptor: Int32

    private init(agent: Process, descriptor: Int32) {
        self.agent = agent
        self.descriptor = descriptor
    }

    static func start(in folder: String) async throws -> AgentConnection {
        let path = folder + "/agent.sock"
        let agent = try await startAgent(at: path)
        do {
            return AgentConnection(agent: agent, descriptor: try connectUnix(path))
        } catch {
            kill(agent.processIdentifier, SIGKILL)
            throw error
        }
    }

    /// ssh-agent in the foreground (`-D`), listening on `path`, with no keys: stop it with SIGKILL.
    static func startAgent(at path: String) async throws -> Process {
        guard let sshAgent = ["/usr/bin/ssh-agent", "/bin/ssh-agent"].first(where: FileManager.default.isExecutableFile(atPath:)) else {
            throw BenchError("no ssh-agent to compare with")
        }
        let agent = Process()
        agent.executableURL = URL(fileURLWithPath: sshAgent)
        agent.arguments = ["-D", "-a", path]
        agent.standardOutput = FileHandle.nullDevice
        agent.standardError = FileHandle.nullDevice
        try agent.run()
        guard try await poll(200, every: .milliseconds(25), until: { FileManager.default.fileExists(atPath: path) }) else {
            kill(agent.processIdentifier, SIGKILL)
            agent.waitUntilExit()
            throw BenchError("ssh-agent did not make its socket")
        }
        return agent
    }

    /// One `SSH_AGENTC_REQUEST_IDENTITIES` (11) and its answer, `SSH_AGENT_IDENTITIES_ANSWER` (12) with no keys.
    func listIdentities() throws {
        let request: [UInt8] = [0, 0, 0, 1, 11]
        guard request.withUnsafeBytes({ write(descriptor, $0.baseAddress, $0.count) }) == request.count else {
            throw BenchError("writing to ssh-agent: \(String(cString: strerror(errno)))")
        }
        var answer = [UInt8](repeating: 0, count: 9)
        var count = 0
        while count < answer.count {
            let got = answer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + count, $0.count - count) }
            guard got > 0 else { throw BenchError("ssh-agent closed or failed: \(String(cString: strerror(errno)))") }
            count += got
        }
        guard answer[4] == 12 else { throw BenchError("ssh-agent answered type \(answer[4])") }
    }

    func stop() {
        close(descriptor)
        kill(agent.processIdentifier, SIGKILL)
        agent.waitUntilExit()
    }
}

/// A key read on one kept connection to the daemon, written and read with blocking
/// `write` and `read` on the calling thread as `AgentConnection` does, so the two round
/// trips are set side by side with the same client's cost. The answer is read to its end
/// by its `Content-Length` (the daemon always sends one); nothing else of it is parsed.
final class BlockingKeyRead {
    private let descriptor: Int32
    private let request: [UInt8]
    private var buffer = [UInt8](repeating: 0, count: 16 * 1024)

    init(socket path: String, target: String) throws {
        descriptor = try connectUnix(path)
        request = Array("GET \(target) HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8)
    }

    /// One request and its whole answer; throws unless it is a 200.
    func read() throws {
        guard request.withUnsafeBytes({ write(descriptor, $0.baseAddress, $0.count) }) == request.count else {
            throw BenchError("writing to the daemon: \(String(cString: strerror(errno)))")
        }
        var count = 0
        var wanted: Int?
        while wanted.map({ count < $0 }) ?? true {
            let got = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress! + count, $0.count - count) }
            guard got > 0 else { throw BenchError("the daemon closed or failed: \(String(cString: strerror(errno)))") }
            count += got
            if wanted == nil, let end = Self.headEnd(buffer[..<count]) {
                let head = String(decoding: buffer[..<end], as: UTF8.self).lowercased()
                guard head.hasPrefix("http/1.1 200"),
                      let line = head.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
                      let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) else {
                    throw BenchError("the daemon answered: \(head)")
                }
                wanted = end + 4 + length
            }
        }
    }

    private static func headEnd(_ bytes: ArraySlice<UInt8>) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in bytes.startIndex...(bytes.endIndex - 4)
        where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index
        }
        return nil
    }

    deinit { close(descriptor) }
}

/// A blocking connection to a Unix socket: its descriptor.
func connectUnix(_ path: String) throws -> Int32 {
    let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { throw BenchError("socket: \(String(cString: strerror(errno)))") }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { bytes in
        for (index, byte) in path.utf8.enumerated() where index < bytes.count - 1 { bytes[index] = byte }
    }
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    guard connected == 0 else {
        let reason = String(cString: strerror(errno))
        close(descriptor)
        throw BenchError("cannot connect to \(path): \(reason)")
    }
    return descriptor
}
