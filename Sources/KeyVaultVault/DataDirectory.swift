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
        var parent = (path as NSString).deletingLastPathComponent
        var info = stat()
        while !parent.isEmpty, parent != "/", stat(parent, &info) != 0 {
            missing.append(parent)
            parent = (parent as NSString).deletingLastPathComponent
        }
        for folder in missing.reversed() where mkdir(folder, 0o700) != 0 && errno != EEXIST {
            throw VaultError.dataDirectory("cannot create \(folder): \(String(cString: strerror(errno)))")
        }
    }

    package static func restrictFiles(in directory: String) throws {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        for name in names where name.hasPrefix(Vault.fileName) {
            _ = chmod(directory + "/" + name, 0o600)
        }
    }
}
