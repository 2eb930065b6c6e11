import ArgumentParser
import KeyVaultIDs

/// `--device-id` and `--key-id`: parsed into their types where they enter, with the sentence a person needs.
enum ParsedID {
    static func parse<Kind>(_ text: String) throws -> ID16<Kind> {
        guard let id = ID16<Kind>(hex: text) else { throw ValidationError("\(Kind.name) is 32 lowercase hex characters") }
        return id
    }
}
