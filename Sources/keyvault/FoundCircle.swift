import ArgumentParser

extension AccountCommand {
    /// An account created on a device with no relay: its circle founded on the relay the
    /// daemon now has, so other devices can enroll (an unlock does it on the embedded relay).
    struct Found: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "found",
            abstract: "Found the circle of an account this device held on its own, on the daemon's relay, so other devices can enroll.",
            discussion: "The embedded relay needs nothing more (an unlock founds it too). A relay service needs the person's sign-in: "
                + "an ID token whose nonce is `keyvault account identity-nonce`.")
        @OptionGroup var socket: SocketOptions
        @OptionGroup var account: AccountOption
        @OptionGroup var identity: IdentityTokenOption

        func run() async throws {
            let id = try account.validated()
            var body: [String: String] = [:]
            if let token = try identity.read() { body["identityToken"] = token }
            try await CLIRequest(socket: socket.path).send("POST", "/v1/accounts/\(id)/circle", json: body).finish()
        }
    }
}
