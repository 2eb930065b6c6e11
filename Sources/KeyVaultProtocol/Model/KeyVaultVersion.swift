import KeyVaultCrypto
public enum KeyVaultVersion {
    public static let string = "0.1.0"
}
