import KeyVaultCrypto
import KeyVaultIDs
import Testing

/// The CLI's hex (no libsodium in it) against libsodium's, for every byte value.
@Suite("BranchFreeHex: the CLI's hex of a key")
struct BranchFreeHexTests {
    @Test("every byte 0-255 is written as libsodium's sodium_bin2hex writes it")
    func everyByte() {
        let bytes = (0...255).map { UInt8($0) }
        #expect(String(decoding: BranchFreeHex.digits(bytes), as: UTF8.self) == KeyVaultCrypto.Hex.encode(bytes))
        #expect(BranchFreeHex.digits([]).isEmpty)
    }
}
