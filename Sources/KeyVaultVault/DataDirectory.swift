import Foundation
#if canImport(Glibc)
import Glibc
import KeyVaultAccount
#endif

/// The data directory's permissions: 0700 for the folder, 0600 for its files.
package enum DataDirectory {
    package static func prepare(_ path: String) throws {
        var info = stat()
        if stat(path, &info) != 0 {
            guard mkdir(path, 0o700) == 0 else {
                throw VaultError.dataDirectory("cannot create \(path): \(String(cString: strerror(errno)))")
            }
            return
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else {
            throw VaultError.dataDirectory("\(path) exists and is not a directory")
        }
        guard info.st_uid == geteuid() else {
            throw VaultError.dataDirectory("\(path) belongs to another user (uid \(info.st_uid))")
        }
        let mode = String(info.st_mode & 0o7777, radix: 8)
        // A folder anyone may write (/tmp, say: `--data-dir ..` from a folder in it) is shared: the
        // vault does not live there, and its mode is left as it is (making /tmp 0700 broke every other user of it).
        guard info.st_mode & 0o002 == 0, info.st_mode & UInt32(S_ISVTX) == 0 else {
            throw VaultError.dataDirectory("\(path) is a shared folder (mode \(mode)): the vault needs a folder of its own; choose another --data-dir")
        }
        guard info.st_mode & 0o077 != 0 else { return }
        // A wider mode is tightened to 0700 only on a folder that holds the vault alone (or nothing yet):
        // the daemon changes no folder that is also something else (a home, `/` as root).
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        guard names.allSatisfy({ $0.hasPrefix(Vault.fileName) }) else {
            throw VaultError.dataDirectory("\(path) is mode \(mode) and holds more than the vault; the vault's folder is 0700 and its own: "
                                           + "choose an empty folder for --data-dir, or make this one 0700 (chmod 700)")
        }
        _ = chmod(path, 0o700)
    }

    /// Makes each missing folder above `path`, outermost first, 0700; folders that exist are left as
    /// they are (the user's own home, say). One that another process makes first is taken as made.
    package static func makeParents(of path: String) throws {
        var missing: [String] = []
        var parent = Self.folder(of: path)
        var info = stat()
        while !parent.isEmpty, parent != "/", stat(parent, &info) != 0 {
            missing.append(parent)
            parent = Self.folder(of: parent)
        }
        for folder in missing.reversed() where mkdir(folder, 0o700) != 0 && errno != EEXIST {
            throw VaultError.dataDirectory("cannot create \(folder): \(String(cString: strerror(errno)))")
        }
    }

    /// The folder that holds `path`, as `NSString.deletingLastPathComponent` answers: "" for a bare
    /// name, "/" for the root and what is right under it, trailing slashes ignored. Not Foundation's:
    /// this toolchain's traps on "." and on a path that ends in "/" (`--socket kv.sock` crashed the daemon).
    package static func folder(of path: String) -> String {
        var path = Substring(path)
        while path.count > 1, path.last == "/" { path.removeLast() }
        guard let slash = path.lastIndex(of: "/") else { return "" }
        var folder = path[..<slash]
        while folder.count > 1, folder.last == "/" { folder.removeLast() }
        return folder.isEmpty ? "/" : String(folder)
    }

    package static func restrictFiles(in directory: String) throws {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        for name in names where name.hasPrefix(Vault.fileName) {
            _ = chmod(directory + "/" + name, 0o600)
        }
    }
}
