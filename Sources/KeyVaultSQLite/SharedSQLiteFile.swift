import Foundation
package import GRDB

/// Opening a SQLite file that other processes may open at the same moment.
///
/// Switching a fresh file to WAL (`PRAGMA journal_mode = WAL`, run by GRDB's
/// `DatabasePool`) needs an exclusive lock that SQLite does not wait for
/// through the busy handler: the process that loses the race gets
/// `SQLITE_BUSY` ("database is locked") at once, whatever the busy timeout.
/// The same holds for a first migration racing another. Both are tried
/// again, with a short random pause, until `patience` is spent: the winner
/// holds the lock for milliseconds, so the loser's next try finds the file in
/// WAL mode (or migrated) and goes on.
package enum SharedSQLiteFile {
    package static func openPool(path: String, configuration: Configuration, patience: Duration = .seconds(10)) throws -> DatabasePool {
        try retryingWhileBusy(patience: patience) { try DatabasePool(path: path, configuration: configuration) }
    }

    /// Runs `work` again while it fails with `SQLITE_BUSY` or `SQLITE_LOCKED`, or a
    /// constraint it lost to another process doing the same, until `patience` is
    /// spent; then the last error is thrown.
    package static func retryingWhileBusy<T>(patience: Duration = .seconds(10), _ work: () throws -> T) throws -> T {
        try retrying(patience: patience, when: isContention, work)
    }

    /// Migrates a file other processes may be migrating at the same moment. GRDB
    /// reads which migrations are applied before it takes the write lock, so two
    /// processes can both start the same one: the loser fails on what the winner
    /// made ("index … already exists", a constraint, a busy lock). A new pass reads
    /// them applied; a migration that fails for any other reason fails every pass.
    package static func migrate(_ migrator: DatabaseMigrator, _ pool: DatabasePool, patience: Duration = .seconds(10)) throws {
        try retrying(patience: patience, when: { _ in true }) { try migrator.migrate(pool) }
    }

    private static func retrying<T>(patience: Duration, when retry: (DatabaseError) -> Bool, _ work: () throws -> T) throws -> T {
        let clock = ContinuousClock()
        let giveUp = clock.now.advanced(by: patience)
        while true {
            do {
                return try work()
            } catch let error as DatabaseError where retry(error) && clock.now < giveUp {
                usleep(useconds_t.random(in: 5_000...40_000))
            }
        }
    }

    private static func isContention(_ error: DatabaseError) -> Bool {
        switch error.resultCode.primaryResultCode {
        case .SQLITE_BUSY, .SQLITE_LOCKED, .SQLITE_CONSTRAINT: return true
        default: return false
        }
    }
}

extension SharedSQLiteFile {
    package struct LinkedFile: Error, CustomStringConvertible {
        package let path: String
        package var description: String {
            "\(path) is a symbolic link or has another name (a hard link); a relay file in a shared folder is opened only as a plain file"
        }
    }

    /// SQLite follows links when it opens a database and its `-wal` and `-shm`
    /// files. In a folder others can write, a link planted there would have it
    /// write into whatever the link names (the vault): each of the three must be
    /// absent or a plain file with one name. (Checked before opening; what SQLite
    /// then opens is also what `checkSameFile` compares against.)
    package static func refuseLinks(at path: String) throws {
        for name in [path, path + "-wal", path + "-shm"] {
            var info = stat()
            guard lstat(name, &info) == 0 else { continue }
            guard (info.st_mode & S_IFMT) == S_IFREG, info.st_nlink == 1 else { throw LinkedFile(path: name) }
        }
    }
}

extension SharedSQLiteFile {
    /// SQLite's Unix VFS holds a file's absolute path in 512 bytes, with room for its
    /// `-journal` name: a longer path opens nowhere, whatever the file system allows.
    package static let longestPath = 504

    package struct Uncreatable: Error, CustomStringConvertible {
        package let path: String
        package let reason: String
        package var description: String { "cannot make \(path): \(reason)" }
    }

    /// For a file not yet there, what would stop SQLite making it, found without making
    /// anything (`keyvault-relay check-config` changes nothing): the path's length, each
    /// name's length, and a folder this user can write.
    package static func refuseUncreatable(at path: String) throws {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        guard absolute.utf8.count <= longestPath else {
            throw Uncreatable(path: path, reason: "its absolute path is \(absolute.utf8.count) bytes; SQLite opens at most \(longestPath)")
        }
        let nameMax = 255
        if let long = absolute.split(separator: "/").first(where: { $0.utf8.count > nameMax }) {
            throw Uncreatable(path: path, reason: "a name in it is \(long.utf8.count) bytes; a file system name is at most \(nameMax)")
        }
        let folder = URL(fileURLWithPath: absolute).deletingLastPathComponent().path
        var info = stat()
        guard stat(folder, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
            throw Uncreatable(path: path, reason: "its folder \(folder) is not there")
        }
        guard access(folder, W_OK | X_OK) == 0 else {
            throw Uncreatable(path: path, reason: "this user cannot write its folder \(folder)")
        }
    }
}
