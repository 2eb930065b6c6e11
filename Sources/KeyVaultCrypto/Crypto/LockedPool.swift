internal import CSodium
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Locked pages shared by many secrets: the memory behind every `SecureBytes`
/// and `SecureScratch`.
///
/// A region is one anonymous mapping: a guard page (no access), the data pages
/// (`mlock`ed, `MADV_DONTDUMP`), a guard page. A pooled region is carved into
/// slots of one size class (16 to 2,048 bytes); a larger secret gets a region
/// of its own, as `sodium_malloc` would give it. A slot is zeroed
/// (`sodium_memzero`) when it is released, and a region's pages are zeroed
/// again before they are unmapped. So the number of secrets is bounded by
/// memory, not by `vm.max_map_count`: a region of 64 KiB holds 2,048 32-byte
/// keys in three mappings, where one `sodium_malloc` per key took three or four
/// each.
///
/// What pooling gives up: secrets of one size class sit next to each other
/// with no guard page between them (an overrun within the crypto layer could
/// reach a neighbour), and there is no canary. The code that writes into a slot
/// is this module's, and every write is bounded by the slot's capacity.
///
/// If `mlock` fails (RLIMIT_MEMLOCK without CAP_IPC_LOCK), the region is still
/// used, guarded and excluded from core dumps, but its pages may be swapped:
/// the pool counts those bytes (`Usage.swappable`) and calls the handler set
/// with `onLockFailure`, so the daemon can say so. Nothing fails silently.
///
/// No pointer leaves this module: `Slot` is internal, and `SecureBytes` and
/// `SecureScratch` are the only users.
package final class LockedPool: Sendable {
    /// The pool every secret of the process comes from.
    package static let shared = LockedPool()

    /// Slot sizes of the pooled regions; anything larger gets its own region.
    static let sizeClasses = [16, 32, 64, 128, 256, 512, 1024, 2048]

    /// What the pool holds, in bytes.
    package struct Usage: Sendable, Equatable {
        /// Secrets held now.
        package var secrets = 0
        /// Bytes of the slots (or own regions) those secrets occupy.
        package var inUse = 0
        /// Data pages mapped for secrets (excluding guard pages): what the pool asks to lock.
        package var reserved = 0
        /// Of `reserved`, the bytes `mlock` accepted.
        package var locked = 0
        /// Mappings the pool made (each is three VMAs: guard, data, guard).
        package var regions = 0
        /// Regions whose `mlock` failed, since the process started.
        package var lockFailures = 0

        /// Secret memory that may be written to swap: `mlock` refused it.
        package var swappable: Int { reserved - locked }
    }

    /// One secret's place: internal, so no pointer leaves the crypto layer.
    struct Slot: @unchecked Sendable {
        let pointer: UnsafeMutableRawPointer
        /// The bytes the slot owns (its size class, or its own region's data pages).
        let capacity: Int
        let region: Int
        let index: Int32
    }

    /// Plain values and addresses, read and changed only under the pool's lock.
    private struct Region: @unchecked Sendable {
        /// The start of the mapping (the first guard page).
        let mapping: UnsafeMutableRawPointer
        let mappedBytes: Int
        let data: UnsafeMutableRawPointer
        let dataBytes: Int
        let locked: Bool
        /// The size class's index, or nil for a region of its own.
        let sizeClass: Int?
        let slotSize: Int
        let slots: Int
        /// Slots never handed out start at `nextUnused`; released ones are in `free`.
        var nextUnused: Int32 = 0
        var free: [Int32] = []
        var used = 0
        /// Whether the region is in its class's `available` list.
        var listed = false

        var hasRoom: Bool { !free.isEmpty || Int(nextUnused) < slots }
    }

    private struct State: ~Copyable {
        var regions: [Int: Region] = [:]
        var nextRegion = 0
        /// Per size class: regions that may have a free slot (checked on use).
        var available: [[Int]] = Array(repeating: [], count: LockedPool.sizeClasses.count)
        var usage = Usage()
        var lockFailureHandler: (@Sendable (Usage) -> Void)?
    }

    private let state = Mutex(State())
    let pageSize: Int
    /// Data pages per pooled region.
    let regionBytes: Int

    /// `regionPages` data pages per pooled region (16 pages, 64 KiB, by default).
    package init(regionPages: Int = 16) {
        Sodium.ensureReady()
        pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
        regionBytes = regionPages * pageSize
        precondition(regionBytes >= Self.sizeClasses.last!, "a pooled region must hold at least one slot of every class")
    }

    /// What the pool holds now.
    package var usage: Usage { state.withLock { $0.usage } }

    /// Called (outside the pool's lock, on the allocating thread) each time a
    /// region's pages could not be locked. The daemon logs it.
    package func onLockFailure(_ handler: @escaping @Sendable (Usage) -> Void) {
        state.withLock { $0.lockFailureHandler = handler }
    }

    /// A zeroed slot of at least `count` bytes (at least one).
    func allocate(_ count: Int) -> Slot {
        let count = max(count, 1)
        guard let sizeClass = Self.sizeClasses.firstIndex(where: { $0 >= count }) else {
            return allocateOwnRegion(count)
        }
        var failed: (@Sendable (Usage) -> Void, Usage)?
        let slot = state.withLock { state -> Slot in
            if let slot = Self.take(from: &state, sizeClass: sizeClass) { return Self.account(slot, in: &state) }
            let region = makeRegion(dataBytes: regionBytes, sizeClass: sizeClass, slotSize: Self.sizeClasses[sizeClass])
            let id = Self.add(region, to: &state)
            if !region.locked, let handler = state.lockFailureHandler { failed = (handler, state.usage) }
            state.regions[id]!.listed = true
            state.available[sizeClass].append(id)
            return Self.account(Self.take(from: &state, sizeClass: sizeClass)!, in: &state)
        }
        if let (handler, usage) = failed { handler(usage) }
        return slot
    }

    /// Zeroes the slot and gives it back. A pooled region left empty is unmapped
    /// if its class has another with room; a region of its own always is.
    func release(_ slot: Slot) {
        sodium_memzero(slot.pointer, slot.capacity)
        let unmap = state.withLock { state -> Region? in
            state.usage.secrets -= 1
            state.usage.inUse -= slot.capacity
            guard var region = state.regions[slot.region] else { preconditionFailure("a slot of no region") }
            region.used -= 1
            guard let sizeClass = region.sizeClass else {
                Self.remove(slot.region, from: &state)
                return region
            }
            region.free.append(slot.index)
            if region.used == 0, state.available[sizeClass].contains(where: { $0 != slot.region && state.regions[$0]!.hasRoom }) {
                if region.listed { state.available[sizeClass].removeAll { $0 == slot.region } }
                Self.remove(slot.region, from: &state)
                return region
            }
            if !region.listed {
                region.listed = true
                state.available[sizeClass].append(slot.region)
            }
            state.regions[slot.region] = region
            return nil
        }
        if let unmap { Self.unmap(unmap) }
    }

    // MARK: Regions

    private func allocateOwnRegion(_ count: Int) -> Slot {
        let dataBytes = (count + pageSize - 1) / pageSize * pageSize
        let region = makeRegion(dataBytes: dataBytes, sizeClass: nil, slotSize: dataBytes)
        var failed: (@Sendable (Usage) -> Void, Usage)?
        let slot = state.withLock { state -> Slot in
            let id = Self.add(region, to: &state)
            if !region.locked, let handler = state.lockFailureHandler { failed = (handler, state.usage) }
            return Self.account(Self.take(fromRegion: id, in: &state)!, in: &state)
        }
        if let (handler, usage) = failed { handler(usage) }
        return slot
    }

    /// Maps guard + data + guard, locks the data pages and keeps them out of core dumps.
    private func makeRegion(dataBytes: Int, sizeClass: Int?, slotSize: Int) -> Region {
        let mappedBytes = dataBytes + 2 * pageSize
        let mapping = mmap(nil, mappedBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        guard let mapping, mapping != MAP_FAILED else {
            // One mapping per 64 KiB of secrets: this is memory itself running out (or vm.max_map_count, far later than before).
            fatalError("keyvaultd: cannot map \(mappedBytes) bytes for secrets: out of memory or memory mappings (errno \(errno))")
        }
        let data = mapping + pageSize
        // Guard pages: an overrun or underrun of the region faults instead of reading a neighbour.
        guard mprotect(mapping, pageSize, PROT_NONE) == 0, mprotect(data + dataBytes, pageSize, PROT_NONE) == 0 else {
            fatalError("keyvaultd: cannot protect the guard pages of a secret region (errno \(errno))")
        }
        // Not in core dumps (the daemon also disables dumps altogether); best effort on kernels without it.
        _ = madvise(data, dataBytes, MADV_DONTDUMP)
        let locked = mlock(data, dataBytes) == 0
        return Region(mapping: mapping, mappedBytes: mappedBytes, data: data, dataBytes: dataBytes, locked: locked,
                      sizeClass: sizeClass, slotSize: slotSize, slots: dataBytes / slotSize)
    }

    private static func unmap(_ region: Region) {
        sodium_memzero(region.data, region.dataBytes)
        if region.locked { _ = munlock(region.data, region.dataBytes) }
        _ = munmap(region.mapping, region.mappedBytes)
    }

    private static func add(_ region: Region, to state: inout State) -> Int {
        let id = state.nextRegion
        state.nextRegion += 1
        state.regions[id] = region
        state.usage.regions += 1
        state.usage.reserved += region.dataBytes
        if region.locked { state.usage.locked += region.dataBytes } else { state.usage.lockFailures += 1 }
        return id
    }

    private static func remove(_ id: Int, from state: inout State) {
        let region = state.regions.removeValue(forKey: id)!
        state.usage.regions -= 1
        state.usage.reserved -= region.dataBytes
        if region.locked { state.usage.locked -= region.dataBytes }
    }

    private static func account(_ slot: Slot, in state: inout State) -> Slot {
        state.usage.secrets += 1
        state.usage.inUse += slot.capacity
        return slot
    }

    /// A slot from the first listed region of the class with room; regions found full are unlisted.
    private static func take(from state: inout State, sizeClass: Int) -> Slot? {
        while let id = state.available[sizeClass].last {
            if let slot = take(fromRegion: id, in: &state) { return slot }
            state.available[sizeClass].removeLast()
            state.regions[id]!.listed = false
        }
        return nil
    }

    private static func take(fromRegion id: Int, in state: inout State) -> Slot? {
        guard var region = state.regions[id], region.hasRoom else { return nil }
        let index: Int32
        if let reused = region.free.popLast() {
            index = reused
        } else {
            index = region.nextUnused
            region.nextUnused += 1
        }
        region.used += 1
        state.regions[id] = region
        return Slot(pointer: region.data + Int(index) * region.slotSize, capacity: region.slotSize, region: id, index: index)
    }
}

#if DEBUG
extension LockedPool {
    /// For tests: whether every byte of a released slot is zero, read through
    /// the region (which is still mapped while any slot of it is in use).
    func slotIsZero(_ slot: Slot) -> Bool? {
        state.withLock { state in
            guard state.regions[slot.region] != nil else { return nil }
            return UnsafeRawBufferPointer(start: slot.pointer, count: slot.capacity).allSatisfy { $0 == 0 }
        }
    }
}
#endif
