package import KeyVaultCrypto
/// A device's public identity for one account.
package struct DeviceKeys: Sendable, Equatable {
    package var signing: SigningPublicKey
    package var box: BoxPublicKey
    package var name: String

    package init(signing: SigningPublicKey, box: BoxPublicKey, name: String) {
        self.signing = signing
        self.box = box
        self.name = name
    }

    /// BLAKE2b-128 over both public keys under `Labels.deviceID`, in hex.
    package var deviceID: DeviceID {
        DeviceID(hash: LabeledHash.hash(label: Labels.deviceID, parts: [signing.rawRepresentation, box.rawRepresentation], outputByteCount: 16))
    }

    package func write(to writer: inout FieldWriter) {
        writer.bytes(signing.rawRepresentation)
        writer.bytes(box.rawRepresentation)
        writer.string(name)
    }

    package static func read(from reader: inout FieldReader) throws(ProtocolError) -> DeviceKeys {
        do {
            let signing = try SigningPublicKey(rawRepresentation: try reader.bytes(count: 32, "a signing key"))
            let box = try BoxPublicKey(rawRepresentation: try reader.bytes(count: 32, "a box key"))
            let name = try reader.string()
            guard name.utf8.count <= 128 else { throw ProtocolError.malformed("a device name is longer than 128 bytes") }
            return DeviceKeys(signing: signing, box: box, name: name)
        } catch let error as ProtocolError {
            throw error
        } catch {
            throw .malformed("bad public key")
        }
    }
}
