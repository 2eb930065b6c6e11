package import Foundation
package import KeyVaultCrypto
package import KeyVaultProtocol

/// The account as a machine: every change to its value (`AccountState`) is an
/// `Event` handed to `AccountState.handle(_:now:)`, which answers the `Effect`s
/// its owner is to carry out. No I/O happens here and time is passed in. For the
/// events whose change the vault must hold first, the machine names the write
/// (`vault`), decided on a copy before anything is published; the owner runs it,
/// then publishes what the event left (`KeyVaultService.perform`). Other vault
/// writes are still the jobs' (docs/ARCHITECTURE.md, "The account machine");
/// the relay's work comes after.
///
/// An event the machine refuses (`refused`, `damaged`) changes nothing: the
/// value is exactly what it was. docs/ARCHITECTURE.md ("The account machine")
/// holds the state table, generated from this method by `AccountMachineTests`.
package enum AccountMachine {
    package enum Event: Sendable {
        // Locking.
        /// Locked: the KEK and the identity leave memory, and a `whenUnlocked` account's keys.
        case lock
        /// The right passphrase: the KEK and every item unwrapped under it.
        case unlock(kek: SecretKey, secrets: [ItemSlot: SecureBytes])
        /// A wrong passphrase: the back-off grows from the one held now.
        case wrongPassphrase(baseSeconds: Int, maxSeconds: Int)
        /// A new account, unlocked from its start (created here, or enrolling).
        case opened(kek: SecretKey, identity: DeviceIdentity, keys: [KeyID: SecretKey])
        /// The passphrase changed: every item wrapped again under the new KEK.
        case rewrapped(items: [StoredItem], salt: [UInt8], kdf: KDFParameters)

        // Keys.
        /// A generation key is in the vault (made here, or from a share).
        case keyStored(KeyGeneration, item: StoredItem, key: SecretKey, makingCurrent: Bool)
        /// A key stored but never announced, dropped with its item.
        case generationDropped(KeyID)
        /// The circle destroyed the account and the vault shredded its keys.
        case shredded

        // The circle's log.
        /// A circle founded here later, by a device that held the account on its own: not on the relay yet.
        case founded(CircleState)
        /// Verified entries adopted (the relay's, or a rebase of this device's own); the relay holds `confirmed`.
        case circleAdopted(CircleState, confirmed: Int)
        /// A joining device read its circle afresh from the relay (it showed another): the vault's log replaced whole.
        case circleReadAfresh(CircleState)
        /// This device appended an entry: the circle it makes, the shares it owes, the
        /// promotion deadline kept with an announce, and the outbox rows that ride with it.
        case appended(CircleState, owing: [OwedDelivery], promotion: (keyID: KeyID, at: Date)?, outbox: [RelayRecord] = [])
        /// The relay holds the log through `through`, and took the `settled` shares.
        case relayConfirmed(through: Int, settled: [OwedDelivery])

        // Reading the relay.
        /// `rows` rows up to `cursor` were read, and `kept` of them are to be kept for the next start: the
        /// cursor goes to the vault with them, or every `cursorWriteInterval` rows (`vault`).
        case read(upTo: RelayCursor, rows: Int, kept: [RelayNote])
        /// Reading starts again from the relay's start; kept shares take their new numbers.
        case readingRestarted(renumbered: [RelayCursor: RelayCursor])
        /// The notes the vault kept of the relay are replayed once (`replay`).
        case notesReplayed
        /// A share for this device arrived: kept sealed while it cannot be opened (`kept`), else `openShare`.
        case shareArrived(sealed: [UInt8], cursor: RelayCursor, limit: Int)
        /// Kept shares taken in (or found unusable) after an unlock.
        case sharesTaken([RelayCursor])
        /// This device took a key as an approved member: if it was joining, it has joined (`joined`).
        case keyTakenAsMember

        // Pairing: handed to the `Enrollment` machine with the account's circle and device.
        /// This device asked to join with `request`, whose code it shows (a new exchange: no pairing key kept).
        case requestedToJoin(PairingRequest, code: String)
        /// A joining device's answer to the response it took.
        case answered(Pairing.Answer)
        /// The exchange's key, wrapped under the KEK, kept so an approval after a restart still authenticates.
        case pairingKeyKept([UInt8])
        /// An approval for this joining device arrived.
        case approvalArrived(PairingApproval)
        /// Check the approvals that arrived against the circle as it is now (`approval`).
        case approvalChecked
        /// A request to join this circle arrived: `kept` if it names its head.
        case requestArrived(PairingRequest)
        /// A pairing version 1 request arrived: `kept` to be listed, never answered.
        case retiredRequestArrived(device: DeviceKeys, headHash: LogHash, requestedAt: Date)
        /// This trusted device responded to `request`.
        case responded(to: PairingRequest)
        /// A new device's confirmation (or refusal) of a response: `kept` if it answers a request held here.
        case confirmationArrived([UInt8])
        /// A person dismissed a request (the vault keeps the dismissal): `kept` if one was held.
        case dismissed(DeviceID)

        // Promotions: handed to the `Promotions` machine with the account's circle.
        /// A device acknowledged a key (verified against the circle): `promotion` effects.
        case acknowledged(Promotions.VerifiedAck)
        /// The key was promoted and the vault no longer keeps its deadline.
        case promoted(KeyID)
    }

    package enum Effect: Sendable, Equatable {
        /// What the vault must hold before memory does: run before the state this event left is published.
        case vault(VaultWrite)
        /// What `Locking` decided: a back-off to keep in the vault, what left memory, what to announce.
        case locking(Locking.Effect)
        /// What `Promotions` decided: a timer, a promote to append, a deadline to clear.
        case promotion(Promotions.Effect)
        /// The record the event brought is kept (a request, a confirmation, a sealed share, a dismissal).
        case kept
        /// The share cannot be kept sealed: open it now.
        case openShare
        /// What the approvals that arrived come to.
        case approval(Enrollment.ApprovalCheck)
        /// The vault's notes of the relay, to replay.
        case replay([RelayNote])
        /// This device has joined: the vault's enrollment row goes.
        case joined
        /// The event is refused and changed nothing (a record the protocol does not allow).
        case refused(ProtocolError)
        /// The event shows damage and changed nothing (a stored key that is not what its slot says).
        case damaged(String)
    }
}

extension AccountMachine.Effect {
    var isFailure: Bool {
        switch self {
        case .refused, .damaged: true
        default: false
        }
    }
}

extension Array where Element == AccountMachine.Effect {
    /// Throws what the machine refused (`ProtocolError`) or found damaged (`VaultError.corrupt`); else
    /// answers the effects.
    package func orThrow() throws -> Self {
        for effect in self {
            switch effect {
            case .refused(let error): throw error
            case .damaged(let why): throw VaultError.corrupt(why)
            default: continue
            }
        }
        return self
    }

    /// Whether the record the event brought was kept.
    package var kept: Bool { contains(.kept) }
    /// What `Locking` decided.
    package var locking: [Locking.Effect] { compactMap { if case .locking(let effect) = $0 { effect } else { nil } } }
    /// What `Promotions` decided.
    package var promotions: [Promotions.Effect] { compactMap { if case .promotion(let effect) = $0 { effect } else { nil } } }
    /// The vault writes the machine named, in order.
    package var vaultWrites: [VaultWrite] { compactMap { if case .vault(let write) = $0 { write } else { nil } } }
    /// The relay notes to replay.
    package var replayed: [RelayNote] { lazy.compactMap { if case .replay(let notes) = $0 { notes } else { nil } }.first ?? [] }
    /// What the approvals that arrived come to.
    package var approvalCheck: Enrollment.ApprovalCheck? { lazy.compactMap { if case .approval(let check) = $0 { check } else { nil } }.first }
}
