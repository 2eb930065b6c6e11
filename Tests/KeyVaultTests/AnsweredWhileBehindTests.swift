import Foundation
import Testing
@testable import KeyVault
@testable import KeyVaultEngine
import KeyVaultAccount
import KeyVaultCrypto
import KeyVaultIDs
import KeyVaultProtocol
import KeyVaultRelay

/// A trusted device answered a new device's request and crashed before the confirmation came back,
/// while the new device's passes were behind: the response is on the relay, unseen. Asked again, the
/// new device must not show the code that response spent (the trusted device, restarted, would answer
/// it a second time, and the new device takes only the first response: its approval would wait its
/// 30 s out). It reads the relay first, takes the response, and asks again with a new code, which works;
/// and if the trusted device was alive after all, its approval of the exchange confirmed first still counts.
@Suite("Enrollment asked again after a response landed unseen (the engine in process)")
struct AnsweredWhileBehindTests {
    let alice = try! AccountID(validating: "alice")
    static var passphrase: SecureBytes { SecureBytes(copying: Array(HarnessDevice.passphrase.utf8)) }

    /// A holds the account; B, whose passes wait (`startPropagation`), has asked to join, and A has read the
    /// request. `aPropagating` false: A reads the relay only when one of its calls does.
    func askedToJoin(_ harness: EngineHarness, aPropagating: Bool = true) async throws -> (a: HarnessDevice, b: HarnessDevice, ticket: Enrollments.EnrollmentTicket) {
        let a = try await harness.device("a", propagating: aPropagating)
        let b = try await harness.device("b", propagating: false)
        try await a.create(alice)
        let ticket = try await b.service.enrolling.enroll(alice, passphrase: Self.passphrase, deviceName: "b")
        try await eventually("A reads the request") {
            if !aPropagating { await a.service.propagation.sync(alice) }
            return (try? a.service.enrolling.enrollments(alice))?.contains { $0.deviceId == ticket.deviceID } == true
        }
        return (a, b, ticket)
    }

    @Test("the new device asked again reads the relay first: a response it had not seen spends its code, and the new code joins it")
    func responseLandedWhileBehind() async throws {
        let harness = try EngineHarness()
        defer { harness.remove() }
        let (a, b, first) = try await askedToJoin(harness)
        let code = try #require(first.pairingCode)

        // A answers with the code and dies before the confirmation: its response is on the relay,
        // and nothing of the exchange is left on A (it was in memory).
        let state = try #require(a.service.owners.state(alice))
        let request = try #require(state.enrollment.requests[first.deviceID])
        let identity = try #require(state.identity)
        let response = try PairingResponse.make(to: request, code: code, responder: state.deviceID, signer: identity.signing, circle: state.circle).response
        try await a.relay.publish(batch: [.challenge(response)])

        let again = try await b.service.enrolling.enroll(alice, passphrase: Self.passphrase, deviceName: "b")
        #expect(again.deviceID == first.deviceID)
        try #require(again.pairingCode != nil && again.pairingCode != code, "asked again, B showed the code the response on the relay had spent")

        b.startPropagation()
        try await eventually("A reads the new request") {
            (try? a.service.enrolling.enrollments(alice))?.contains { $0.deviceId == again.deviceID && $0.requestedAt == again.since } == true
        }
        _ = try await a.service.enrolling.approve(alice, deviceID: again.deviceID, pairingCode: again.pairingCode!)
        try await eventually("B holds the key") { b.key(alice) != nil }
        #expect(b.key(alice)?.generation.keyID == a.key(alice)?.generation.keyID)
        await b.stop()
        await a.stop()
    }

    /// A's answer from before its daemon restarted (nothing of that exchange is left on A), published as A made it.
    func answerBeforeARestart(_ a: HarnessDevice, _ first: Enrollments.EnrollmentTicket) async throws {
        let state = try #require(a.service.owners.state(alice))
        let request = try #require(state.enrollment.requests[first.deviceID])
        let identity = try #require(state.identity)
        let earlier = try PairingResponse.make(to: request, code: first.pairingCode!, responder: state.deviceID, signer: identity.signing,
                                               circle: state.circle).response
        try await a.relay.publish(batch: [.challenge(earlier)])
    }

    @Test("a trusted device whose earlier answer the new device confirms during its wait is told so at once, not after 30 s")
    func anotherAnswerConfirmed() async throws {
        let harness = try EngineHarness()
        defer { harness.remove() }
        let (a, b, first) = try await askedToJoin(harness)
        try await answerBeforeARestart(a, first)

        // Approved again with the same code, A answers a second time; B, behind until now, takes the first answer.
        let approval = Task { try await a.service.enrolling.approve(alice, deviceID: first.deviceID, pairingCode: first.pairingCode!) }
        try await eventually("A's second answer is on the relay") { try await a.relay.all(.challenge, account: alice).count == 2 }
        let started = ContinuousClock.now
        b.startPropagation()
        do {
            _ = try await approval.value
            Issue.record("the approval of an answer the new device did not confirm succeeded")
        } catch {
            #expect("\(error)".contains("answered another response"), "\(error)")
        }
        #expect(ContinuousClock.now - started < .seconds(10), "the approval waited \(ContinuousClock.now - started) for a confirmation that could not come")
        await b.stop()
        await a.stop()
    }

    @Test("a trusted device that has read the new device's answer to another response does not spend the code on one of its own")
    func anotherAnswerKnownBefore() async throws {
        let harness = try EngineHarness()
        defer { harness.remove() }
        let (a, b, first) = try await askedToJoin(harness)
        try await answerBeforeARestart(a, first)
        b.startPropagation()
        try await eventually("B's confirmation is on the relay") { try await !a.relay.all(.reveal, account: alice).isEmpty }

        do {
            _ = try await a.service.enrolling.approve(alice, deviceID: first.deviceID, pairingCode: first.pairingCode!)
            Issue.record("the approval of an answer the new device did not confirm succeeded")
        } catch {
            #expect("\(error)".contains("answered another response"), "\(error)")
        }
        #expect(try await a.relay.all(.challenge, account: alice).count == 1, "A answered a request the new device had answered already")
        await b.stop()
        await a.stop()
    }

    @Test("asked again just after it confirmed, while the trusted device's approval is on its way: that approval still makes it a member")
    func approvalOfTheExchangeBefore() async throws {
        let harness = try EngineHarness()
        defer { harness.remove() }
        // A reads the relay only in its approval's own passes: the confirmation and B's new request
        // come to it in one page, the new request taking the old one's place by the time it approves.
        let (a, b, first) = try await askedToJoin(harness, aPropagating: false)

        // A approves with the code; its response lands while B's passes are behind.
        let approval = Task { try await a.service.enrolling.approve(alice, deviceID: first.deviceID, pairingCode: first.pairingCode!) }
        try await eventually("A's response is on the relay") { try await !a.relay.all(.challenge, account: alice).isEmpty }

        // Asked again, B takes the response (confirming it to A) and, its code spent, asks with a new one.
        let again = try await b.service.enrolling.enroll(alice, passphrase: Self.passphrase, deviceName: "b")
        #expect(again.pairingCode != first.pairingCode)
        // A, still waiting, gets the confirmation and approves the exchange B had confirmed.
        #expect(try await approval.value == "b")
        b.startPropagation()
        try await eventually("B trusts the approval of the exchange before its new request, and holds the key") { b.key(alice) != nil }
        #expect(b.key(alice)?.generation.keyID == a.key(alice)?.generation.keyID)
        await b.stop()
        await a.stop()
    }
}
