import ArgumentParser
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import KeyVaultClient
import KeyVaultUnixSocket

struct Export: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Print everything stored about an account on this device (no key), or write an encrypted recovery kit.")
    @OptionGroup var socket: SocketOptions
    @OptionGroup var account: AccountOption
    @Option(name: .customLong("recovery-kit"), help: "Write a recovery kit (every key, under a kit passphrase) to this file.")
    var recoveryKit: String?
    @Option(help: "Read the kit passphrase from this file.")
    var kitPassphraseFile: String?

    func run() async throws {
        let id = try account.validated()
        let request = CLIRequest(socket: socket.path)
        guard let path = recoveryKit else { return try await request.send("GET", "/v1/accounts/\(id)/export").finish() }
        let passphrase = try PassphraseInput.read(file: kitPassphraseFile, prompt: "Kit passphrase: ", confirm: true)
        let answer = try await request.send("POST", "/v1/accounts/\(id)/recovery-kit", json: ["kitPassphrase": passphrase])
        guard answer.state == "ready", let kit = answer.field("kit").flatMap(Base64.decode) else { return try answer.finish() }
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard fd >= 0 else { throw UsageError("cannot create \(path) (it must not exist yet)") }
        // Every byte written and on disk, or no file: a kit cut short by a full disk must never pass for one.
        if let problem = Self.writeAll(kit, to: fd) {
            unlink(path)
            StandardError.print("The recovery kit for \(id) was not written to \(path): \(problem). Nothing was left there; free space and export again.")
            throw ExitCode(CLIExit.other)
        }
        StandardError.print("Recovery kit for \(id) written to \(path) (mode 0600). Keep it and its passphrase apart.")
        if let member = answer.field("memberDeviceId") {
            StandardError.print("After every device is lost, it restores the account into its circle. Its member in the circle is device \(member): "
                + "`keyvault revoke --account \(id) --device-id \(member)` retires this kit.")
        } else {
            StandardError.print("It restores the keys only: this device has no circle on a relay (make a kit again once it has one).")
        }
    }

    /// Writes all of `bytes`, syncs and closes `fd`; answers what failed, or nil.
    static func writeAll(_ bytes: [UInt8], to fd: Int32) -> String? {
        var problem: String?
        do throws(FileDescriptorOutput.Failure) {
            try FileDescriptorOutput(descriptor: fd).write(bytes)
        } catch {
            problem = error.description
        }
        if problem == nil, fsync(fd) != 0 { problem = String(cString: strerror(errno)) }
        if close(fd) != 0, problem == nil { problem = String(cString: strerror(errno)) }
        return problem
    }
}

struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "import", abstract: "Restore an account from a recovery kit on this device.")
    @OptionGroup var socket: SocketOptions
    @Option(name: .customLong("recovery-kit"), help: "The kit file.")
    var recoveryKit: String
    @Option(help: "Read the kit passphrase from this file.")
    var kitPassphraseFile: String?
    @Option(help: "Read this device's new passphrase for the account from this file.")
    var passphraseFile: String?
    @Option(help: "This device's name.")
    var deviceName: String = "restored device"

    func run() async throws {
        guard let kit = FileManager.default.contents(atPath: recoveryKit) else { throw UsageError("cannot read \(recoveryKit)") }
        let kitPassphrase = try PassphraseInput.read(file: kitPassphraseFile, prompt: "Kit passphrase: ", confirm: false)
        let passphrase = try PassphraseInput.read(file: passphraseFile, prompt: "New passphrase for this device: ", confirm: true)
        let answer = try await CLIRequest(socket: socket.path).send("POST", "/v1/accounts/import", json: [
            "kit": Base64.encode([UInt8](kit)), "kitPassphrase": kitPassphrase, "passphrase": passphrase, "deviceName": deviceName,
        ])
        // What the kit restored, in the person's words: into the circle, or the keys only and why.
        if answer.state == "ready", let restored = answer.field("restored") { StandardError.print("Restored \(restored).") }
        try answer.finish()
    }
}
