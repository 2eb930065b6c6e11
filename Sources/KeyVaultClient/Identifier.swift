public import KeyVaultIDs

// The IDs an answer carries are the daemon's own type (`ID16`, in a target with no
// dependency), under the names this library has always given them.

/// A 16-byte identifier of its own kind, as the daemon writes it: 32 lowercase
/// hex characters. A key's ID names the key in envelopes and records (and
/// reveals nothing of it); a device's names a device of the account's circle.
/// `Kind` keeps one from standing where the other belongs.
public typealias Identifier<Kind: ID16Kind> = ID16<Kind>
public typealias IdentifierKind = ID16Kind
public typealias KeyIdentifierKind = KeyIDKind
public typealias DeviceIdentifierKind = DeviceIDKind
/// A generation key's ID.
public typealias KeyIdentifier = ID16<KeyIDKind>
/// A device's ID in an account.
public typealias DeviceIdentifier = ID16<DeviceIDKind>
