package enum KeyVaultVersion {
    package static let string = "0.1.0"
}
