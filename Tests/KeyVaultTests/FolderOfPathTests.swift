import KeyVaultVault
import Testing

/// `DataDirectory.folder(of:)` answers what `NSString.deletingLastPathComponent` does, where this
/// toolchain's Foundation answers at all (it traps on "." and on a trailing slash).
@Suite("The folder that holds a path")
struct FolderOfPathTests {
    @Test("a path's folder", arguments: [
        ("kv.sock", ""), (".", ""), ("", ""), ("data/", ""), ("./x", "."), ("a/b", "a"), ("a/b/", "a"), ("a//b", "a"),
        ("/", "/"), ("/a", "/"), ("/a/", "/"), ("//a", "/"), ("/run/user/1000/keyvault/kv.sock", "/run/user/1000/keyvault"),
    ])
    func folder(_ path: String, _ folder: String) {
        #expect(DataDirectory.folder(of: path) == folder, "\(path)")
    }
}
