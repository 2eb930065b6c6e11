extension CPace {
    /// Party B, who answers. Non-copyable: `finish` consumes it, and the
    /// session key leaves it only once the initiator's tag has verified.
    package struct Responder: ~Copyable, Sendable {
        private let sessionKey: SessionKey
        private let expectedConfirmation: ConfirmationTag
        /// `Yb, ADb, Tb`, to send to the initiator.
        package let response: Response

        /// Takes the initiator's `Ya, ADa`: computes `g`, a fresh `yb`,
        /// `Yb = yb·g`, `K = scalar_mult_vfy(yb, Ya)` (throws
        /// `identityElement` for the identity), ISK over `transcript_ir`, and
        /// the tags of §10.4. The password is not kept.
        package init(respondingTo message: Message, inputs: Inputs, associatedData: [UInt8]) throws {
            try self.init(respondingTo: message, inputs: inputs, associatedData: associatedData, scalar: .random())
        }

        /// The same with a chosen `yb`: for the draft's test vectors only. A
        /// fixed scalar in a real run gives the password away.
        package init(respondingTo message: Message, inputs: Inputs, associatedData: [UInt8],
                     scalarForTesting scalar: Ristretto255.Scalar) throws {
            try self.init(respondingTo: message, inputs: inputs, associatedData: associatedData, scalar: scalar)
        }

        private init(respondingTo message: Message, inputs: Inputs, associatedData: [UInt8], scalar: Ristretto255.Scalar) throws {
            let generator = CPace.calculateGenerator(password: inputs.password, channelID: inputs.channelID, sessionID: inputs.sessionID)
            let own = Message(element: try scalar.multiply(generator), associatedData: associatedData)
            let k = try scalar.multiply(message.element)
            let transcript = Transcript.initiatorResponder.of(message.share, message.associatedData, own.share, own.associatedData)
            let sessionKey = CPace.intermediateSessionKey(sessionID: inputs.sessionID, k: k, transcript: transcript)
            let macKey = CPace.confirmationKey(sessionID: inputs.sessionID, sessionKey: sessionKey)
            self.sessionKey = sessionKey
            self.expectedConfirmation = CPace.confirmationTag(key: macKey, over: message)
            self.response = Response(message: own, confirmation: CPace.confirmationTag(key: macKey, over: own))
        }

        /// Takes the initiator's `Ta`: checks it in constant time (throws
        /// `confirmationFailed`) and only then answers ISK.
        package consuming func finish(_ confirmation: ConfirmationTag) throws -> SessionKey {
            guard expectedConfirmation.constantTimeEquals(confirmation) else { throw CPaceError.confirmationFailed }
            return sessionKey
        }
    }
}
