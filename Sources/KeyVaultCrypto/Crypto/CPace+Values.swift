extension CPace {
    /// What both parties must hold alike for a run to succeed.
    ///
    /// The password (PRS, the pairing code) stays in secure memory and is never
    /// printed. CI and sid are octet strings whose encoding the application
    /// fixes (§4.3); the draft recommends a unique sid per run (§10.9) and the
    /// parties' identities in CI, initiator first (§10.1.1).
    package struct Inputs: Sendable {
        /// PRS.
        package let password: SecureBytes
        /// CI, the channel identifier: never sent, so it may hold identities.
        package let channelID: [UInt8]
        /// sid, the session identifier: public, unique per run where possible.
        package let sessionID: [UInt8]

        package init(password: SecureBytes, channelID: [UInt8] = [], sessionID: [UInt8] = []) {
            self.password = password
            self.channelID = channelID
            self.sessionID = sessionID
        }
    }

    /// One party's message: its share `Y` and its associated data `AD`, which
    /// travels in the clear and is authenticated by the run.
    package struct Message: Sendable, Equatable {
        package let element: Ristretto255.Element
        package let associatedData: [UInt8]

        /// The share, `Ya` or `Yb`: a ristretto255 element, 32 bytes.
        package var share: [UInt8] { element.rawRepresentation }

        /// Throws `CPaceError.invalidElement` unless `share` is the canonical
        /// encoding of a ristretto255 element. (The identity element passes
        /// here and is refused by the scalar multiplication that uses it.)
        package init(share: [UInt8], associatedData: [UInt8]) throws {
            self.element = try Ristretto255.Element(rawRepresentation: share)
            self.associatedData = associatedData
        }

        package init(element: Ristretto255.Element, associatedData: [UInt8]) {
            self.element = element
            self.associatedData = associatedData
        }

        /// `lv_cat(Y, AD)`: the bytes a confirmation tag covers (§10.4), and
        /// one way to send the message.
        package var encoded: [UInt8] { CPace.lvCat(share, associatedData) }

        /// Parses `lv_cat(Y, AD)`. Throws `malformedMessage` unless it is
        /// exactly two fields, then `invalidElement` unless `Y` is an element.
        package init(encoded: [UInt8]) throws {
            guard let parts = CPace.lvSplit(encoded, count: 2) else { throw CPaceError.malformedMessage }
            try self.init(share: parts[0], associatedData: parts[1])
        }
    }

    /// A key-confirmation tag (HMAC-SHA-512, 64 bytes). Not `Equatable`: tags
    /// are compared only in constant time, inside this layer.
    package struct ConfirmationTag: Sendable {
        package let rawRepresentation: [UInt8]

        /// Throws unless `raw` is exactly 64 bytes.
        package init(rawRepresentation raw: [UInt8]) throws {
            guard raw.count == CPace.confirmationTagByteCount else {
                throw CryptoError.wrongSize(what: "a CPace confirmation tag", expected: CPace.confirmationTagByteCount, actual: raw.count)
            }
            self.rawRepresentation = raw
        }

        package init(produced raw: [UInt8]) {
            precondition(raw.count == CPace.confirmationTagByteCount)
            self.rawRepresentation = raw
        }

        package func constantTimeEquals(_ other: ConfirmationTag) -> Bool {
            ConstantTime.equal(rawRepresentation, other.rawRepresentation)
        }
    }

    /// The responder's answer: its message and its confirmation tag `Tb`.
    package struct Response: Sendable {
        package let message: Message
        package let confirmation: ConfirmationTag

        package init(message: Message, confirmation: ConfirmationTag) {
            self.message = message
            self.confirmation = confirmation
        }
    }

    /// ISK, the intermediate session key: 64 bytes in secure memory. The draft
    /// recommends passing it through a KDF before use (§4, §10.3).
    package struct SessionKey: Sendable {
        package let bytes: SecureBytes

        package init(bytes: SecureBytes) {
            precondition(bytes.count == CPace.sessionKeyByteCount)
            self.bytes = bytes
        }

        package func constantTimeEquals(_ other: SessionKey) -> Bool {
            bytes.constantTimeEquals(other.bytes)
        }
    }
}
