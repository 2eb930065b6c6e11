import ArgumentParser
import FoundationEssentials
import KeyVaultClient
import KeyVaultUnixSocket

/// `--aad`, shared by seal and open: an envelope opens only with the AAD it was sealed with.
struct AADOption: ParsableArguments {
    @Option(help: "Associated data (UTF-8 text) bound to the envelope; open needs the same. Default: none.")
    var aad: String?

    var base64: String? { aad.map { Base64.encode(Array($0.utf8)) } }
}

struct Seal: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "seal",
        abstract: "Seal standard input under the account's key; print the envelope in base64.",
        discussion: "The plaintext is every byte of standard input (up to about 48 KiB). The daemon keeps the key.")
    @OptionGroup var socket: SocketOptions
    @OptionGroup var account: AccountOption
    @OptionGroup var aad: AADOption
    @Option(name: .customLong("key-id"), help: "Seal under this generation's key ID instead of the current key.", transform: ParsedID.parse)
    var keyID: KeyIdentifier?

    func run() async throws {
        let id = try account.validated()
        var plaintext: [UInt8]
        do { plaintext = try StandardInput.readAll() } catch { throw UsageError.other("\(error); nothing was sealed") }
        var item: [String: String] = ["plaintext": Base64.encode(plaintext)]
        Wipe.bytes(&plaintext)
        item["aad"] = aad.base64
        var body: [String: JSONValue] = ["items": [.object(item.mapValues { .string($0) })]]
        if let keyID { body["keyId"] = .string(keyID.hex) }
        let answer = try await CLIRequest(socket: socket.path).send("POST", "/v1/accounts/\(id)/seal", object: body)
        guard answer.state == "ready", let envelope = answer.object["envelopes"]?.array?.first?.string else { return try answer.finish() }
        print(envelope)
    }
}

struct Open: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "open",
        abstract: "Open a base64 envelope read from standard input; write the plaintext to standard output.")
    @OptionGroup var socket: SocketOptions
    @OptionGroup var account: AccountOption
    @OptionGroup var aad: AADOption

    func run() async throws {
        let id = try account.validated()
        let input: [UInt8]
        do { input = try StandardInput.readAll() } catch { throw UsageError.other("\(error)") }
        let envelope = String(decoding: input, as: UTF8.self).trimmedOfWhitespace
        guard !envelope.isEmpty else { throw UsageError("no envelope on standard input") }
        var item = ["envelope": envelope]
        item["aad"] = aad.base64
        let answer = try await CLIRequest(socket: socket.path).send("POST", "/v1/accounts/\(id)/open", object: ["items": [.object(item.mapValues { .string($0) })]])
        guard answer.state == "ready", let encoded = answer.object["plaintexts"]?.array?.first?.string,
              var plaintext = Base64.decode(encoded) else { return try answer.finish() }
        defer { Wipe.bytes(&plaintext) }
        do {
            try FileDescriptorOutput.standardOutput.write(plaintext)
        } catch {
            // Not all of it was written (a full disk, a reader gone): never a success.
            throw UsageError.other("writing the plaintext to standard output: \(error)")
        }
    }
}
