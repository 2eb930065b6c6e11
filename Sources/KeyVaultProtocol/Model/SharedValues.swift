package import KeyVaultIDs

// An account, a caller's bad input, durations as people write them and the version are
// the IDs target's (no dependency), so the CLI shares them without linking the protocol
// or its crypto; the protocol's users know them by these names.
package typealias AccountID = KeyVaultIDs.AccountID
package typealias InvalidInput = KeyVaultIDs.InvalidInput
package typealias DurationText = KeyVaultIDs.DurationText
package typealias KeyVaultVersion = KeyVaultIDs.KeyVaultVersion
