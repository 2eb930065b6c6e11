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
        if info.st_mode & 0o077 != 0 { _ = chmod(path, 0o700) }
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
