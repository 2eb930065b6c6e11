package import Foundation
package import KeyVaultProtocol

/// The second phase of a rotation, decided without I/O: a generation this
/// device announced becomes current once every other trusted device has
/// acknowledged it, or at its deadline. The owner keeps and clears deadlines in
/// the vault, runs the timers and appends the promote entries this value asks for.
package struct Promotions: Sendable, Equatable {
    /// What one device has acknowledged (by key ID, when) and when it was last heard from.
    package struct Acknowledgements: Sendable, Equatable {
        package var generations: [KeyID: Date] = [:]
        package var lastSeen: Date = .distantPast
    }

    package enum Effect: Sendable, Equatable {
        /// Set a timer for the deadline.
        case schedule(keyID: KeyID, at: Date)
        /// Append a promote entry for this key (it is due).
        case promote(keyID: KeyID)
        /// Forget the deadline (vault, then memory): the key is current.
        case clearDeadline(keyID: KeyID)
    }

    /// Generations (key IDs) this device announced and will promote, with their deadlines.
    package private(set) var deadlines: [KeyID: Date]
    /// By device ID.
    package private(set) var acknowledgements: [DeviceID: Acknowledgements] = [:]

    package init(deadlines: [KeyID: Date] = [:]) { self.deadlines = deadlines }

    /// This device announced `keyID`, to be promoted after acknowledgements or at
    /// `deadline`. The owner keeps the deadline in the vault with the announce
    /// entry itself (one transaction), then sets the timer.
    package mutating func announced(keyID: KeyID, deadline: Date) -> [Effect] {
        deadlines[keyID] = deadline
        return [.schedule(keyID: keyID, at: deadline)]
    }

    /// At start: a timer for every deadline still owed, and whatever is due already. A
    /// deadline whose key was promoted before a crash could clear it is cleared.
    package func resumed(circle: CircleState, me: DeviceID, at now: Date) -> [Effect] {
        deadlines.sorted { $0.key < $1.key }.map { keyID, at in
            circle.isPromoted(keyID: keyID) ? .clearDeadline(keyID: keyID) : .schedule(keyID: keyID, at: at)
        } + due(circle: circle, me: me, at: now)
    }

    /// An acknowledgement whose signature was checked against a member's key: made only by
    /// `verify`, so the check (the costly part) runs on a snapshot, outside the account's lock.
    package struct VerifiedAck: Sendable {
        package let ack: ShareAck
        fileprivate init(_ ack: ShareAck) { self.ack = ack }
    }

    /// Checks `ack` against `circle`: signed by a member that is not revoked, for this account.
    package static func verify(_ ack: ShareAck, circle: CircleState) throws(ProtocolError) -> VerifiedAck {
        guard let member = circle.members[ack.deviceID], !member.revoked, ack.account == circle.account else {
            throw .untrustedSigner(ack.deviceID)
        }
        guard ack.isSigned(by: member.keys.signing) else { throw .badSignature("an acknowledgement") }
        return VerifiedAck(ack)
    }

    /// An acknowledgement, checked and then recorded (`verify`, then `acknowledged(verified:)`).
    package mutating func acknowledged(_ ack: ShareAck, circle: CircleState, me: DeviceID, at now: Date) throws(ProtocolError) -> [Effect] {
        try acknowledged(Self.verify(ack, circle: circle), circle: circle, me: me, at: now)
    }

    /// A verified acknowledgement: remembered, and whatever it makes due is promoted. A
    /// device revoked since it was verified no longer counts, not even for what it held.
    package mutating func acknowledged(_ verified: VerifiedAck, circle: CircleState, me: DeviceID, at now: Date) throws(ProtocolError) -> [Effect] {
        let ack = verified.ack
        guard let member = circle.members[ack.deviceID], !member.revoked else { throw .untrustedSigner(ack.deviceID) }
        var entry = acknowledgements[ack.deviceID] ?? Acknowledgements()
        let at = Millis.date(ack.receivedAt)
        entry.generations[ack.keyID] = min(entry.generations[ack.keyID] ?? at, at)
        entry.lastSeen = max(entry.lastSeen, at)
        acknowledgements[ack.deviceID] = entry
        return due(circle: circle, me: me, at: now)
    }

    /// A deadline's timer fired: promote, unless it is done already.
    package func deadlinePassed(keyID: KeyID, circle: CircleState) -> [Effect] {
        guard deadlines[keyID] != nil, !circle.isPromoted(keyID: keyID) else { return [] }
        return [.promote(keyID: keyID)]
    }

    /// What is due now: every key this device owes a promotion for that every
    /// other trusted device acknowledged, or whose deadline has passed.
    package func due(circle: CircleState, me: DeviceID, at now: Date) -> [Effect] {
        let others = circle.trustedDevices.keys.filter { $0 != me }
        return deadlines.keys.sorted().filter { keyID in
            guard !circle.isPromoted(keyID: keyID) else { return false }
            return now >= deadlines[keyID]! || others.allSatisfy { acknowledgements[$0]?.generations[keyID] != nil }
        }.map { .promote(keyID: $0) }
    }

    /// `keyID` is current (promoted here or by another device).
    package mutating func promoted(keyID: KeyID) -> [Effect] {
        guard deadlines.removeValue(forKey: keyID) != nil else { return [] }
        return [.clearDeadline(keyID: keyID)]
    }

    /// The account was destroyed: nothing is owed any more.
    package mutating func shredded() {
        deadlines = [:]
    }
}
