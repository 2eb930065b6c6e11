import Foundation
import Synchronization
import Testing
@testable import KeyVaultCrypto
import KeyVaultWipedBuffers

/// The crypto layer's locked pool: many secrets in few mappings, slots zeroed
/// when released, safe from many tasks at once.
@Suite("Locked pool: secrets share locked regions")
struct LockedPoolTests {
    static func mappings() throws -> Int {
        try String(contentsOfFile: "/proc/self/maps", encoding: .utf8).split(separator: "\n").count
    }

    @Test("50,000 32-byte slots fit in 25 regions, a few mappings each; released, the regions go but one")
    func manySlotsFewMappings() throws {
        let pool = LockedPool()
        let before = try Self.mappings()
        let slots = (0..<50_000).map { _ in pool.allocate(32) }
        let after = try Self.mappings()
        let usage = pool.usage
        #expect(usage.secrets == 50_000)
        #expect(usage.inUse == 50_000 * 32)
        #expect(usage.regions == 25)  // 2,048 slots of 32 bytes per 64 KiB region
        #expect(usage.reserved == 25 * pool.regionBytes)
        // Three per region (guard, data, guard) at most; other suites running beside this one may add a few.
        #expect(after - before <= 3 * 25 + 50, "\(after - before) mappings for 50,000 slots")
        #expect(Set(slots.map(\.pointer)).count == slots.count, "every slot is its own")
        for slot in slots { pool.release(slot) }
        #expect(pool.usage.secrets == 0)
        #expect(pool.usage.inUse == 0)
        #expect(pool.usage.regions == 1, "an empty region is kept only while its class has no other")
    }

    @Test("50,000 SecureBytes add far fewer mappings than secrets")
    func secureBytesShareRegions() throws {
        let before = try Self.mappings()
        let secrets = (0..<50_000).map { _ in SecureBytes(randomCount: 32) }
        let after = try Self.mappings()
        #expect(after - before < 500, "\(after - before) mappings for \(secrets.count) secrets")
        #expect(LockedPool.shared.usage.secrets >= secrets.count)
    }

    @Test("A released slot reads back zero, and is handed out again zeroed")
    func releasedSlotsAreZero() throws {
        let pool = LockedPool()
        let keep = pool.allocate(64)  // keeps the region mapped
        let slot = pool.allocate(64)
        UnsafeMutableRawBufferPointer(start: slot.pointer, count: slot.capacity).initializeMemory(as: UInt8.self, repeating: 0xA5)
        #expect(pool.slotIsZero(slot) == false)
        pool.release(slot)
        #expect(pool.slotIsZero(slot) == true)
        let again = pool.allocate(50)
        #expect(again.pointer == slot.pointer, "the freed slot is reused")
        #expect(UnsafeRawBufferPointer(start: again.pointer, count: again.capacity).allSatisfy { $0 == 0 })
        pool.release(again)
        pool.release(keep)
    }

    @Test("A secret over 2 KiB gets a region of its own, unmapped when released")
    func largeSecretOwnRegion() throws {
        let pool = LockedPool()
        let slot = pool.allocate(10_000)
        #expect(pool.usage.regions == 1)
        #expect(slot.capacity >= 10_000 && slot.capacity % pool.pageSize == 0)
        #expect(pool.usage.reserved == slot.capacity)
        pool.release(slot)
        #expect(pool.usage.regions == 0)
        #expect(pool.usage.reserved == 0)
        #expect(pool.usage.secrets == 0)
    }

    @Test("Pages are locked: with CAP_IPC_LOCK or a limit that covers them, nothing is swappable")
    func pagesAreLocked() throws {
        let pool = LockedPool()
        let slots = (0..<100).map { pool.allocate($0 * 20 + 1) }
        #expect(pool.usage.locked == pool.usage.reserved)
        #expect(pool.usage.swappable == 0)
        #expect(pool.usage.lockFailures == 0)
        for slot in slots { pool.release(slot) }
    }

    @Test("Allocations and releases from many tasks at once never share a slot")
    func concurrentUse() async throws {
        let pool = LockedPool(regionPages: 1)  // small regions: many are made and unmapped along the way
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<16 {
                group.addTask {
                    var held: [(slot: LockedPool.Slot, size: Int, mark: UInt8)] = []
                    var random = SystemRandomNumberGenerator()
                    for round in 0..<3_000 {
                        let size = [16, 32, 33, 64, 100, 500, 2048, 5000].randomElement(using: &random)!
                        let slot = pool.allocate(size)
                        let mark = UInt8(truncatingIfNeeded: task * 16 + round % 16) | 1
                        try Self.check((slot, 0, mark))  // handed out zeroed
                        UnsafeMutableRawBufferPointer(start: slot.pointer, count: size).initializeMemory(as: UInt8.self, repeating: mark)
                        held.append((slot, size, mark))
                        if held.count > 40 || Bool.random(using: &random) {
                            let victim = held.remove(at: Int.random(in: 0..<held.count, using: &random))
                            try Self.check(victim)
                            pool.release(victim.slot)
                        }
                    }
                    for entry in held {
                        try Self.check(entry)
                        pool.release(entry.slot)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(pool.usage.secrets == 0)
        #expect(pool.usage.inUse == 0)
        #expect(pool.usage.regions <= LockedPool.sizeClasses.count)
    }

    /// The slot holds its owner's mark over `size` bytes and zeros after: nobody else wrote into it.
    static func check(_ entry: (slot: LockedPool.Slot, size: Int, mark: UInt8)) throws {
        let bytes = UnsafeRawBufferPointer(start: entry.slot.pointer, count: entry.slot.capacity)
        guard holds(bytes, entry.mark, 0..<entry.size), holds(bytes, 0, entry.size..<entry.slot.capacity) else {
            throw PoolFailure("a slot was written by another owner, or handed out unzeroed")
        }
    }

    /// Whether every byte of `range` is `value`, eight at a time (a debug build is slow byte by byte).
    static func holds(_ bytes: UnsafeRawBufferPointer, _ value: UInt8, _ range: Range<Int>) -> Bool {
        let word = UInt64(value) * 0x0101_0101_0101_0101
        var offset = range.lowerBound
        while offset + 8 <= range.upperBound {
            guard bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self) == word else { return false }
            offset += 8
        }
        return bytes[offset..<range.upperBound].allSatisfy { $0 == value }
    }

    @Test("writeBase64 writes what base64EncodedString answers, and no more")
    func base64IntoBuffer() throws {
        for count in [0, 1, 2, 3, 31, 32, 64] {
            let secret = SecureBytes(randomCount: count)
            var out = [UInt8](repeating: 0xFF, count: secret.base64Count + 2)
            let written = out.withUnsafeMutableBytes { secret.writeBase64(into: $0) }
            #expect(written == secret.base64Count)
            #expect(String(decoding: out[..<written], as: UTF8.self) == secret.base64EncodedString())
            #expect(out[written + 1] == 0xFF)
        }
    }

    @Test("The wiping allocator's blocks are counted as wiped when released")
    func wipingAllocator() throws {
        let before = WipedHeap.wipedBlocks.load(ordering: .relaxed)
        var block = try #require(WipedHeap.allocate(100))
        block.initializeMemory(as: UInt8.self, repeating: 7, count: 100)
        block = try #require(WipedHeap.reallocate(block, 100, 5000))
        #expect(UnsafeRawBufferPointer(start: block, count: 100).allSatisfy { $0 == 7 })
        WipedHeap.deallocate(block)
        #expect(WipedHeap.wipedBlocks.load(ordering: .relaxed) >= before + 2, "the old block of a realloc is wiped too")
    }
}

struct PoolFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
