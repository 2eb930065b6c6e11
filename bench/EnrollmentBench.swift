import Foundation
import Logging

/// Issue 12's figure: enrollment from the new device's request to its key,
/// with this build's pairing (CPace, version 2) beside the build before it
/// (commit, challenge and reveal, version 1), in the same run. Each build runs
/// its own two device processes on its own relay (for the service: its own
/// `keyvault-relay` on its own database); the samples alternate between them,
/// so both see the same noise.
enum EnrollmentBench {
    /// The build measured against: the last commit that paired by version 1.
    static let baselineCommit = "d271e80"

    struct Pair {
        var kind: BenchRelay.Kind
        var current: PropagationBench.Arrival
        var baseline: PropagationBench.Arrival
    }

    /// `baseline`: a folder holding that build's release `keyvault-bench` and `keyvault-relay`.
    static func measure(kind: BenchRelay.Kind, enrollments: Int, baseline: String, in directory: String, logger: Logger) async throws -> Pair {
        func relay(_ name: String, relayBinary: String?) async throws -> BenchRelay {
            try kind == .sqlite
                ? BenchRelay.sqlite(in: directory + "/" + name)
                : await BenchRelay.postgresFromEnvironment(service: true, relayBinary: relayBinary).get()
        }
        let currentRelay = try await relay("enroll-current", relayBinary: nil)
        defer { currentRelay.remove() }
        let baselineRelay = try await relay("enroll-baseline", relayBinary: baseline + "/keyvault-relay")
        defer { baselineRelay.remove() }
        return try await DeviceCircle.with(devices: 2, relay: currentRelay, name: "enroll-current", placement: .processes, logger: logger) { current in
            try await DeviceCircle.with(devices: 2, relay: baselineRelay, name: "enroll-baseline",
                                        placement: .processesOf(binary: baseline + "/keyvault-bench"), logger: logger) { old in
                var now: [Double] = [], then: [Double] = []
                for i in 0..<enrollments {
                    now.append(try await requestToKey(current, user: "enroll\(i)"))
                    then.append(try await requestToKey(old, user: "enroll\(i)"))
                }
                return Pair(kind: kind, current: .init(samples: now), baseline: .init(samples: then))
            }
        }
    }

    /// A new account on device 0; the time from device 1's enroll request being
    /// sent to device 1 holding the key, with the code typed on device 0 as soon
    /// as device 0 can take it (version 1: once the new device revealed).
    static func requestToKey(_ circle: DeviceCircle, user: String) async throws -> Double {
        try await circle.createAccount(user)
        let start = ContinuousClock.now
        try await circle.enroll(user, device: 1)
        return Load.seconds(ContinuousClock.now - start)
    }
}

extension Report {
    static let enrollmentSamples = 30

    /// Both relays; the baseline build must be there (`make bench` builds it).
    mutating func measureEnrollment(baseline: String?, in directory: String, logger: Logger) async {
        guard let baseline, FileManager.default.isExecutableFile(atPath: baseline + "/keyvault-bench") else {
            enrollmentMissing = "no baseline build (`keyvault-bench --baseline DIR`, which `make bench` builds from \(EnrollmentBench.baselineCommit))"
            say("enrollment: not measured: \(enrollmentMissing!)")
            return
        }
        for kind in BenchRelay.Kind.allCases {
            do {
                let pair = try await EnrollmentBench.measure(kind: kind, enrollments: Self.enrollmentSamples, baseline: baseline,
                                                             in: directory, logger: logger)
                enrollment.append(pair)
                say("\(kind.rawValue) enrollment: p50 \(Int(pair.current.percentile(0.5) * 1000)) ms, version 1 \(Int(pair.baseline.percentile(0.5) * 1000)) ms")
            } catch {
                enrollmentMissing = (enrollmentMissing.map { $0 + "; " } ?? "") + "\(kind.rawValue): \(error)"
                say("\(kind.rawValue) enrollment: not measured: \(error)")
            }
        }
    }

    var enrollmentSection: String {
        func ms(_ s: Double) -> String { String(format: "%.1f ms", s * 1000) }
        var rows = ""
        for pair in enrollment {
            let ratio = pair.current.percentile(0.5) / pair.baseline.percentile(0.5)
            rows += "| \(pair.kind.rawValue) | \(ms(pair.current.percentile(0.5))) | \(ms(pair.current.percentile(0.99))) | "
            rows += "\(ms(pair.baseline.percentile(0.5))) | \(ms(pair.baseline.percentile(0.99))) | **\(String(format: "%.2f", ratio))** | "
            rows += (ratio <= 1.2 ? "met" : "**not met**") + " |\n"
        }
        let missing = enrollmentMissing.map { "\nNot measured: \($0).\n" } ?? ""
        return """
            ## Enrollment from request to key, pairing version 2 beside version 1

            Two device processes per build on one relay (a SQLite file, or the relay service on its own PostgreSQL database): \
            device 0 creates an account, device 1 asks to join (`POST …/enroll`), and the person types the code on device 0 as \
            soon as it can take it; the time runs from device 1's request being sent to device 1's `keys/current?wait=30` \
            answering the key. This build pairs by CPace (docs/PAIRING.md): the code shows at once, and typing it runs the \
            exchange (response, confirmation) before the approval travels with its entry and shares. The baseline is the build \
            at \(EnrollmentBench.baselineCommit), the last to pair by commit, challenge and reveal (version 1): its code shows \
            once the new device has revealed. Each build runs its own devices and relay (its own `keyvault-relay` for the \
            service); \(Self.enrollmentSamples) enrollments each, alternating between the builds in the same run.

            | relay | version 2 p50 | version 2 p99 | version 1 p50 | version 1 p99 | p50 ratio | goal ≤ 1.2× |
            |---|---:|---:|---:|---:|---:|---|
            \(rows)\(missing)

            """
    }
}
