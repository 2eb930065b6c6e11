import Foundation
import Testing

/// The same race as real daemons meet it: a device rotates just after a new one joins.
@Suite("Rotations right after enrollments", .serialized)
struct RotateAfterEnrollTests {
    @Test("each new device is followed at once by a rotation; every device ends with every generation", arguments: RelayKind.allCases)
    func rotateRightAfterEachEnrollment(_ kind: RelayKind) async throws {
        let circle = try await Circle(kind)
        defer { circle.remove() }
        let first = try await circle.device()
        #expect(try await first.request("POST", "/v1/accounts", json: ["user": "churn", "passphrase": "pw"]).status == 200)
        var devices = [first]
        var generations = [1]
        for round in 1...6 {
            let joining = try await circle.device()
            try await circle.enroll(joining, into: "churn", approver: devices[round % devices.count], name: "d\(round)")
            devices.append(joining)
            // At once, before anything settles: the newest device rotates, then an older one.
            for rotator in [joining, devices[0]] {
                let rotated = try await rotator.request("POST", "/v1/accounts/churn/rotate", json: ["promote": "now"])
                #expect(rotated.status == 200, "round \(round): \(rotated.object)")
                if let generation = rotated.object["generation"] as? Int { generations.append(generation) }
            }
        }
        // Every device gets every generation, byte for byte the same.
        for generation in Set(generations).sorted() {
            var keys: Set<String> = []
            for (index, device) in devices.enumerated() {
                let reply = try await device.request("GET", "/v1/accounts/churn/keys/\(generation)?wait=30")
                #expect(reply.status == 200, "device \(index), generation \(generation): \(reply.object)")
                if let key = reply["key"] { keys.insert(key) }
            }
            #expect(keys.count == 1, "generation \(generation): \(keys.count) different keys")
        }
    }
}
