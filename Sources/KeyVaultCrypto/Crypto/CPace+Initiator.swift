extension CPace {
    /// Party A, who speaks first. Non-copyable: `finish` consumes it, so its
    /// scalar serves one run and a failed confirmation cannot be retried.
    package struct Initiator: ~Copyable, Sendable {
        private let scalar: Ristretto255.Scalar
        private let sessionID: [UInt8]
        /// `Ya, ADa`, to send to the responder.
        package let message: Message

        /// Computes `g`, a fresh `ya` and `Ya = ya·g` (§7.2). The password is
        /// not kept. Throws `identityElement` only if the generator derived
        /// from the inputs is the identity (negligible).
        package init(inputs: Inputs, associatedData: [UInt8]) throws {
            try self.init(inputs: inputs, associatedData: associatedData, scalar: .random())
        }

        /// The same with a chosen `ya`: for the draft's test vectors only. A
        /// fixed scalar in a real run gives the password away.
        package init(inputs: Inputs, associatedData: [UInt8], scalarForTesting scalar: Ristretto255.Scalar) throws {
            try self.init(inputs: inputs, associatedData: associatedData, scalar: scalar)
        }

        private init(inputs: Inputs, associatedData: [UInt8], scalar: Ristretto255.Scalar) throws {
            let generator = CPace.calculateGenerator(password: inputs.password, channelID: inputs.channelID, sessionID: inputs.sessionID)
            self.scalar = scalar
            self.sessionID = inputs.sessionID
            self.message = Message(element: try scalar.multiply(generator), associatedData: associatedData)
        }

        /// What the initiator ends with: the session key, and `Ta` to send.
        package struct Finished: Sendable {
            package let sessionKey: SessionKey
            /// `Ta`, for the responder's `finish`.
            package let confirmation: ConfirmationTag
        }

        /// Takes the responder's `Yb, ADb, Tb`: `K = scalar_mult_vfy(ya, Yb)`
        /// (throws `identityElement` for the identity), ISK over
        /// `transcript_ir`, then checks `Tb` in constant time (throws
        /// `confirmationFailed`) before it answers ISK and `Ta`.
        package consuming func finish(_ response: Response) throws -> Finished {
            let k = try scalar.multiply(response.message.element)
            let transcript = Transcript.initiatorResponder.of(message.share, message.associatedData,
                                                              response.message.share, response.message.associatedData)
            let sessionKey = CPace.intermediateSessionKey(sessionID: sessionID, k: k, transcript: transcript)
            let macKey = CPace.confirmationKey(sessionID: sessionID, sessionKey: sessionKey)
            let expected = CPace.confirmationTag(key: macKey, over: response.message)
            guard expected.constantTimeEquals(response.confirmation) else { throw CPaceError.confirmationFailed }
            return Finished(sessionKey: sessionKey, confirmation: CPace.confirmationTag(key: macKey, over: message))
        }
    }
}
