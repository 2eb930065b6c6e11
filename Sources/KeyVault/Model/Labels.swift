/// Every domain-separation string keyvaultd uses, named once. A value here is
/// part of the on-disk format or the protocol: changing one is a format break.
public enum Labels {
    /// AAD prefix for a secret wrapped under the account's KEK (docs/FORMAT.md).
    public static let wrap = "keyvault/v1/wrap"
    /// Key IDs: BLAKE2b-128 of the key under this label.
    public static let keyID = "keyvault/v1/key-id"
    /// Device IDs: BLAKE2b-128 of a device's two public keys under this label.
    public static let deviceID = "keyvault/v1/device-id"
}
