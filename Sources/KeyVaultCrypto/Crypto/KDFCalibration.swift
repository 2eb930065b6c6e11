import FoundationEssentials

/// Measures Argon2id on this machine and proposes the cost that takes about
/// a target time, as `cryptsetup benchmark` does for LUKS: memory first (the
/// expensive resource for an attacker), then as many passes as time allows.
package enum KDFCalibration {
    package struct Measurement: Sendable {
        package var parameters: KDFParameters
        package var seconds: Double
    }

    package struct Proposal: Sendable {
        package var parameters: KDFParameters
        package var expectedSeconds: Double
        package var measurements: [Measurement]
    }

    package static func measure(_ parameters: KDFParameters) throws -> Measurement {
        let passphrase = SecureBytes(copying: Array("calibration".utf8))
        let salt = Random.bytes(KDFParameters.saltByteCount)
        let start = ContinuousClock.now
        _ = try PasswordKDF.deriveKey(passphrase: passphrase, salt: salt, parameters: parameters)
        let elapsed = ContinuousClock.now - start
        return Measurement(parameters: parameters, seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }

    /// Starts at `memoryMiB` and halves it (not below 64 MiB) while even one
    /// pass overshoots the target; then fits the passes (at most 10) to it.
    package static func propose(targetSeconds: Double, memoryMiB: Int = 256) throws -> Proposal {
        var measurements: [Measurement] = []
        var memory = memoryMiB
        while true {
            let one = try measure(try KDFParameters(opsLimit: 1, memLimitBytes: UInt64(memory) << 20))
            let three = try measure(try KDFParameters(opsLimit: 3, memLimitBytes: UInt64(memory) << 20))
            measurements += [one, three]
            let perPass = max((three.seconds - one.seconds) / 2, 1e-6)
            let fixed = max(one.seconds - perPass, 0)
            // The nearest number of passes to the target ("about"), not the most that fit under it.
            let passes = Int(((targetSeconds - fixed) / perPass).rounded())
            if passes >= 1 || memory <= 64 {
                let chosen = min(max(passes, 1), 10)
                let parameters = try KDFParameters(opsLimit: UInt64(chosen), memLimitBytes: UInt64(memory) << 20)
                return Proposal(parameters: parameters, expectedSeconds: fixed + perPass * Double(chosen), measurements: measurements)
            }
            memory /= 2
        }
    }
}
