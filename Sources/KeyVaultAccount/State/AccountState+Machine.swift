package import Foundation
package import KeyVaultCrypto

extension AccountState {
    package typealias Event = AccountMachine.Event
    package typealias Effect = AccountMachine.Effect

    /// Steps the machine: applies `event` at `now` and answers what the owner is to do.
    /// A refused or damaged event leaves the value as it was.
    @discardableResult
    package mutating func handle(_ event: Event, now: Date) -> [Effect] {
        var next = self
        let effects = next.step(event, now: now)
        if !effects.contains(where: \.isFailure) { self = next }
        return effects
    }

    /// Throws what an `unlock` with `secrets` would find damaged (`VaultError.corrupt`), changing
    /// nothing: a passphrase change asks before anything is wrapped again.
    package func checkUnlock(kek: SecretKey, secrets: [ItemSlot: SecureBytes], now: Date) throws {
        var copy = self
        _ = try copy.handle(.unlock(kek: kek, secrets: secrets), now: now).orThrow()
    }

    private mutating func step(_ event: Event, now: Date) -> [Effect] {
        switch event {
        case .lock:
            return lock().map(Effect.locking)
        case .unlock(let kek, let secrets):
            do { return try unlock(kek: kek, secrets: secrets).map(Effect.locking) }
            catch VaultError.corrupt(let why) { return [.damaged(why)] }
            catch { return [.damaged("a device key stored here is not a valid key")] }
        case .wrongPassphrase(let base, let max):
            var locking = self.locking
            let effects = locking.wrongPassphrase(at: now, baseSeconds: base, maxSeconds: max)
            take(locking)
            return effects.map(Effect.locking)
        case .opened(let kek, let identity, let keys):
            opened(kek: kek, identity: identity, keys: keys)
        case .rewrapped(let items, let salt, let kdf):
            rewrapped(items, salt: salt, kdf: kdf)
            return [.vault(.rewrap(items: items, salt: salt, kdf: kdf))]

        case .keyStored(let generation, let item, let key, let makingCurrent):
            keyStored(generation, item: item, key: key)
            if makingCurrent { madeCurrent(generation) }
            return [.vault(.addGeneration(generation, item: item, makingCurrent: makingCurrent))]
        case .generationDropped(let keyID):
            dropGeneration(keyID: keyID)
            return [.vault(.removeGeneration(keyID))]
        case .shredded:
            shredded()
            return [.vault(.destroyKeys)]

        case .founded(let circle):
            let write = logWrite(to: circle, confirmed: nil)
            setCircle(circle)
            return [.vault(write)]
        case .circleAdopted(let circle, let confirmed):
            let write = logWrite(to: circle, confirmed: confirmed)
            circleAdopted(circle, confirmed: confirmed)
            return [.vault(write)]
        case .circleReadAfresh(let circle):
            // Replaced from the genesis whatever the two share: rows the held log stopped short of go too.
            let current = currentKey(after: circle)
            circleAdopted(circle, confirmed: circle.entries.count)
            return [.vault(.replaceLog(from: .genesis, entries: circle.entries, confirmed: circle.entries.count, current: current))]
        case .appended(let circle, let deliveries, let promotion, let outbox):
            let write = logWrite(to: circle, confirmed: nil, owe: deliveries,
                                 promotionDeadline: promotion.map { VaultWrite.PromotionDeadline(keyID: $0.keyID, at: $0.at) }, outbox: outbox)
            guard case .appendLog = write else { return [.damaged("an appended entry that rewrites the log (a job appends on the head it holds)")] }
            appended(circle, owing: deliveries)
            if let promotion { announcedPromotion(keyID: promotion.keyID, deadline: promotion.at) }
            return [.vault(write)]
        case .relayConfirmed(let count, let settled):
            relayConfirmed(through: count, settled: settled)
            return [.vault(.confirmLog(through: count, settled: settled))]

        case .read(let cursor, let rows, let kept):
            return read(upTo: cursor, rows: rows, kept: kept) ? [.vault(.advanceRelayCursor(to: cursor, keep: kept))] : []
        case .readingRestarted(let renumbered):
            restartReading(renumbered: renumbered)
        case .notesReplayed:
            return [.replay(takeNotesToReplay())]
        case .shareArrived(let sealed, let cursor, let limit):
            do { return try keepSealed(sealed, at: cursor, limit: limit) ? [.kept] : [.openShare] }
            catch { return [.refused(error)] }
        case .sharesTaken(let cursors):
            sharesTaken(cursors)
            return cursors.isEmpty ? [] : [.vault(.dropRelayNotes(cursors))]
        case .keyTakenAsMember:
            return joinedIfApproved() ? [.joined] : []

        case .requestedToJoin(let request, let code):
            requestedToJoin(request, code: code)
            keepPairingKey(nil)
        case .answered(let answer):
            answered(answer)
        case .pairingKeyKept(let wrapped):
            keepPairingKey(wrapped)
            return [.vault(.keepPairingKey(wrapped))]
        case .approvalArrived(let approval):
            approvalArrived(approval)
        case .approvalChecked:
            return [.approval(authenticateApproval())]
        case .requestArrived(let request):
            return requestArrived(request, at: now) ? [.kept] : []
        case .retiredRequestArrived(let device, let headHash, let requestedAt):
            return retiredRequestArrived(device: device, headHash: headHash, requestedAt: requestedAt, at: now) ? [.kept] : []
        case .responded(let request):
            responded(to: request)
        case .confirmationArrived(let body):
            do { return try confirmationArrived(body) ? [.kept] : [] }
            catch { return [.refused(error)] }
        case .dismissed(let device):
            return [.vault(.dismissRequest(device))] + (dismiss(device) ? [.kept] : [])

        case .acknowledged(let verified):
            do { return try acknowledged(verified, at: now).map(Effect.promotion) }
            catch { return [.refused(error)] }
        case .promoted(let keyID):
            let cleared = promoted(keyID: keyID)
            return cleared.isEmpty ? [] : [.vault(.clearPromotionDeadlines(cleared))]
        }
        return []
    }
}
