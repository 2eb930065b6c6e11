import Foundation
import Logging
package import KeyVaultCrypto
package import KeyVaultProtocol
import KeyVaultAccount
import KeyVaultVault
import KeyVaultRelay
import KeyVaultRelayClient

/// The engine's parts: each a value over the one `KeyVaultService`, with the
/// jobs of one concern (propagation, publishing, enrollment, rotation, …). A
/// part sees the service's stores, owners and hub, and calls another part's
/// jobs by name: the forwarders below send each call to the part that owns
/// it (a part's own members win over these).
package protocol EnginePart: Sendable {
    var service: KeyVaultService { get }
}

extension KeyVaultService: EnginePart {
    package var service: KeyVaultService { self }

    var propagation: Propagation { Propagation(service: self) }
    var publishing: Publishing { Publishing(service: self) }
    var relayAudit: RelayAudit { RelayAudit(service: self) }
    var enrolling: Enrollments { Enrollments(service: self) }
    var rotations: Rotations { Rotations(service: self) }
    var envelopes: Envelopes { Envelopes(service: self) }
    var exports: Exports { Exports(service: self) }
    var founding: Founding { Founding(service: self) }
}

extension EnginePart {
    var vault: Vault { service.vault }
    var policy: PolicyStore { service.policy }
    var logger: Logger { service.logger }
    var now: @Sendable () -> Date { service.now }
    var owners: AccountOwners { service.owners }
    var pairings: PairingExchanges { service.pairings }
    var relay: (any Relay)? { service.relay }
    var hub: WaitingHub { service.hub }
    var relayCredentials: RelayCredentials? { service.relayCredentials }
    var hasRelay: Bool { service.hasRelay }

    @discardableResult
    func update<T>(_ id: AccountID, _ change: (inout AccountState) throws -> T) rethrows -> T? {
        try service.update(id, change)
    }

    func install(_ id: AccountID, _ state: AccountState?) {
        service.install(id, state)
    }

    func existing(_ id: AccountID) throws -> AccountState {
        try service.existing(id)
    }

    func statusOf(_ id: AccountID) -> AccountStatus? {
        service.statusOf(id)
    }

    func requireIdentityToken(_ token: String?, for what: String) throws {
        try service.requireIdentityToken(token, for: what)
    }

    func preparedIdentity(for id: AccountID) -> DeviceIdentity {
        service.preparedIdentity(for: id)
    }

    func spendIdentity(for id: AccountID) {
        service.spendIdentity(for: id)
    }

    func signRelayRequests(_ id: AccountID, as identity: DeviceIdentity?) {
        service.signRelayRequests(id, as: identity)
    }

    func availability(_ account: AccountID, _ selector: KeySelector) -> KeyAvailability? {
        service.availability(account, selector)
    }

    var relayStatus: RelayStatus? { service.publishing.relayStatus }
    var accountIDs: [AccountID] { service.propagation.accountIDs }

    func storeKey(_ id: AccountID, _ generation: KeyGeneration, key: SecretKey, kek: SecretKey, accessibility: Accessibility,
                  makingCurrent: Bool = false) async throws {
        try await service.storeKey(id, generation, key: key, kek: kek, accessibility: accessibility, makingCurrent: makingCurrent)
    }

    // Propagation.propagate
    package func propagate() async {
        await service.propagation.propagate()
    }

    // Propagation.syncAll
    func syncAll() async {
        await service.propagation.syncAll()
    }

    // Propagation.sync
    func sync(_ account: AccountID) async {
        await service.propagation.sync(account)
    }

    // Propagation.replayNotes
    func replayNotes(_ account: AccountID) async {
        await service.propagation.replayNotes(account)
    }

    // Propagation.authenticateApproval
    func authenticateApproval(_ account: AccountID) async {
        await service.propagation.authenticateApproval(account)
    }

    // Propagation.advanceEnrollments
    func advanceEnrollments(_ account: AccountID) async {
        await service.propagation.advanceEnrollments(account)
    }

    // Propagation.adopt
    func adopt(_ entries: [LogEntry], account: AccountID) async throws {
        try await service.propagation.adopt(entries, account: account)
    }

    // Propagation.shred
    func shred(_ account: AccountID) async throws {
        try await service.propagation.shred(account)
    }

    // Propagation.readLog
    func readLog(for account: AccountID) async {
        await service.propagation.readLog(for: account)
    }

    // Propagation.takeKeptShares
    func takeKeptShares(for account: AccountID) async {
        await service.propagation.takeKeptShares(for: account)
    }

    // Propagation.takeShare
    @discardableResult
    func takeShare(_ sealed: [UInt8], account: AccountID) async throws -> Bool {
        try await service.propagation.takeShare(sealed, account: account)
    }

    // Publishing.appendEntry
    @discardableResult
    func appendEntry(_ id: AccountID, owe deliveries: [OwedDelivery] = [], promotionDeadline: (keyID: KeyID, at: Date)? = nil,
                     enqueue: (LogEntry) -> [RelayRecord] = { _ in [] },
                     _ body: (CircleState) throws -> LogEntry.Body?) async throws -> LogEntry? {
        try await service.publishing.appendEntry(id, owe: deliveries, promotionDeadline: promotionDeadline, enqueue: enqueue, body)
    }

    // Publishing.publishQueued
    @discardableResult
    func publishQueued(_ id: AccountID) async -> PublishOutcome {
        await service.publishing.publishQueued(id)
    }

    // Publishing.isFounding
    func isFounding(_ id: AccountID) -> Bool {
        service.publishing.isFounding(id)
    }

    // Publishing.abandonFounding
    func abandonFounding(_ id: AccountID, because why: String) async throws {
        try await service.publishing.abandonFounding(id, because: why)
    }

    // Publishing.send
    func send(_ records: [RelayRecord], account: AccountID) async {
        await service.publishing.send(records, account: account)
    }

    // Publishing.publishAllQueued
    func publishAllQueued() async {
        await service.publishing.publishAllQueued()
    }

    // Publishing.noteRelay
    func noteRelay(_ error: (any Error)?) {
        service.publishing.noteRelay(error)
    }

    // RelayAudit.auditRelay
    func auditRelay() async {
        await service.relayAudit.auditRelay()
    }

    // RelayAudit.restartReading
    func restartReading(_ id: AccountID) async throws {
        try await service.relayAudit.restartReading(id)
    }

    // Enrollments.enroll
    package func enroll(_ id: AccountID, passphrase: SecureBytes, deviceName: String, identityToken: String? = nil) async throws -> Enrollments.EnrollmentTicket {
        try await service.enrolling.enroll(id, passphrase: passphrase, deviceName: deviceName, identityToken: identityToken)
    }

    // Enrollments.enrollments
    package func enrollments(_ id: AccountID) throws -> [Enrollments.EnrollmentListing] {
        try service.enrolling.enrollments(id)
    }

    // Enrollments.approve
    package func approve(_ id: AccountID, deviceID: DeviceID, pairingCode: String) async throws -> String {
        try await service.enrolling.approve(id, deviceID: deviceID, pairingCode: pairingCode)
    }

    // Enrollments.dismissEnrollment
    package func dismissEnrollment(_ id: AccountID, deviceID: DeviceID) async throws {
        try await service.enrolling.dismissEnrollment(id, deviceID: deviceID)
    }

    // Enrollments.devices
    package func devices(_ id: AccountID) throws -> [Enrollments.DeviceListing] {
        try service.enrolling.devices(id)
    }

    // Rotations.rotate
    package func rotate(_ id: AccountID, promotion: Rotations.Promotion) async throws -> Rotations.RotationResult {
        try await service.rotations.rotate(id, promotion: promotion)
    }

    // Rotations.rotateLocked
    func rotateLocked(_ id: AccountID, promotion: Rotations.Promotion) async throws -> Rotations.RotationResult {
        try await service.rotations.rotateLocked(id, promotion: promotion)
    }

    // Rotations.dropUnannounced
    func dropUnannounced(_ id: AccountID, keyID: KeyID) async throws {
        try await service.rotations.dropUnannounced(id, keyID: keyID)
    }

    // Rotations.promote
    func promote(_ id: AccountID, keyID: KeyID) async throws {
        try await service.rotations.promote(id, keyID: keyID)
    }

    // Rotations.promoteDue
    func promoteDue(_ id: AccountID) async {
        await service.rotations.promoteDue(id)
    }

    // Rotations.perform
    func perform(_ effects: [Promotions.Effect], for id: AccountID) async {
        await service.rotations.perform(effects, for: id)
    }

    // Rotations.schedulePromotionDeadline
    func schedulePromotionDeadline(_ id: AccountID, keyID: KeyID, at deadline: Date) {
        service.rotations.schedulePromotionDeadline(id, keyID: keyID, at: deadline)
    }

    // Rotations.resumeOwedWork
    func resumeOwedWork() {
        service.rotations.resumeOwedWork()
    }

    // Rotations.revoke
    package func revoke(_ id: AccountID, deviceID: DeviceID) async throws -> Rotations.RotationResult? {
        try await service.rotations.revoke(id, deviceID: deviceID)
    }

    // Rotations.payOwedWork
    func payOwedWork(_ id: AccountID) async {
        await service.rotations.payOwedWork(id)
    }

    // Rotations.rotateAgedKeys
    package func rotateAgedKeys() async {
        await service.rotations.rotateAgedKeys()
    }

    // Envelopes.seal
    func seal(_ account: AccountID, keyID: KeyID?, items: [Envelopes.BatchItem]) throws -> Envelopes.BatchOutcome<Envelopes.SealedBatch> {
        try service.envelopes.seal(account, keyID: keyID, items: items)
    }

    // Envelopes.open
    func open(_ account: AccountID, items: [Envelopes.BatchItem]) throws -> Envelopes.BatchOutcome<Envelopes.OpenedBatch> {
        try service.envelopes.open(account, items: items)
    }

    // Exports.export
    package func export(_ id: AccountID) throws -> Exports.AccountExport {
        try service.exports.export(id)
    }

    // Exports.delete
    package func delete(_ id: AccountID, everywhere: Bool) async throws {
        try await service.exports.delete(id, everywhere: everywhere)
    }
}
