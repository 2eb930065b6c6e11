import Foundation
import GRDB
@testable import KeyVault
@testable import KeyVaultEngine
@testable import KeyVaultPolicy
import Testing
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultAccount
import KeyVaultVault
import KeyVaultRelay
import KeyVaultRelayClient
import KeyVaultRelayStore

@Suite("Vault migrations")
struct VaultMigrationTests {
    /// A vault written by the v3 schema opens under v4: each key keeps its
    /// generation and gains its key ID, and every stored log entry counts as
    /// confirmed (before v4, every stored entry came from the relay).
    @Test("a v3 vault migrates to v4 and loses nothing")
    func v3ToV4() throws {
        var template = Array("/tmp/kvmigrate-XXXXXX".utf8CString)
        let directory = String(cString: try #require(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let keyIDs = [String(repeating: "a", count: 32), String(repeating: "b", count: 32)]
        do {
            let queue = try DatabaseQueue(path: directory + "/" + Vault.fileName)
            try VaultSchema.migrator.migrate(queue, upTo: "v3")
            try queue.write { db in
                try db.execute(sql: """
                    INSERT INTO accounts (id, created_at, kdf_algorithm, kdf_ops, kdf_mem, kdf_salt, accessibility, device_id,
                        signing_public_key, box_public_key, current_generation, device_name)
                    VALUES ('old', 0, 'argon2id13', 1, 8192, zeroblob(16), 'whenUnlocked', '0123456789abcdef0123456789abcdef', zeroblob(32), zeroblob(32), 2, 'laptop')
                    """)
                for (index, keyID) in keyIDs.enumerated() {
                    try db.execute(sql: "INSERT INTO generations VALUES ('old', ?, ?, 0, 'active')", arguments: [index + 1, keyID])
                    try db.execute(sql: """
                        INSERT INTO items VALUES ('old', 'generation-key', ?, 'genp', 'keyvaultd', 'keyvaultd.keys', 'l', 1, 'whenUnlocked', 0, 0, x'01')
                        """, arguments: [index + 1])
                }
                try db.execute(sql: "INSERT INTO items VALUES ('old', 'device-signing-key', 0, 'genp', 'keyvaultd', 'keyvaultd.keys', 'l', 0, 'whenUnlocked', 0, 0, x'01')")
                for seq in 0..<3 { try db.execute(sql: "INSERT INTO circle_log VALUES ('old', ?, x'00')", arguments: [seq]) }
            }
        }
        let snapshot = try #require(try Vault(directory: directory).loadAll().first)
        #expect(snapshot.generations.map(\.keyID.hex) == keyIDs)
        #expect(snapshot.generations.map(\.number) == [1, 2])
        let keys = snapshot.items.filter { $0.attributes.kind == .generationKey }
        #expect(keys.map { $0.attributes.keyID?.hex } == keyIDs)
        #expect(keys.map(\.attributes.generation) == [1, 2])
        #expect(snapshot.items.first { $0.attributes.kind == .deviceSigningKey }?.attributes.keyID == nil)
        #expect(snapshot.logConfirmed == 3)
        #expect(snapshot.outbox.isEmpty && snapshot.owedDeliveries.isEmpty && snapshot.promotionDeadlines.isEmpty)
    }
}
