import KeyVaultCrypto

/// `keyvaultd --calibrate-kdf 500ms`: Argon2id measured where the daemon runs it, and the
/// `[kdf]` policy that takes about the target, printed; nothing is served. In the daemon's
/// executable, not the CLI's, which links no crypto library.
enum KDFCalibrationReport {
    static func run(targetSeconds: Double, target: String, memoryMiB: Int) throws {
        print("Measuring Argon2id on this machine (target \(target))…")
        let proposal = try KDFCalibration.propose(targetSeconds: targetSeconds, memoryMiB: memoryMiB)
        for m in proposal.measurements {
            print("  \(m.parameters.opsLimit) pass(es) over \(m.parameters.memLimitBytes >> 20) MiB: \(Int(m.seconds * 1000)) ms")
        }
        print("""

            Proposed policy (about \(Int(proposal.expectedSeconds * 1000)) ms per unlock):

            [kdf]
            passes = \(proposal.parameters.opsLimit)
            memory_mib = \(proposal.parameters.memLimitBytes >> 20)
            """)
        if proposal.parameters.opsLimit == 10, proposal.expectedSeconds < targetSeconds * 0.8 {
            print("\nNote: at most 10 passes are proposed; for an unlock nearer \(target), start from more memory (--calibrate-memory-mib).")
        }
        if proposal.parameters.memLimitBytes < 256 << 20 || proposal.parameters.opsLimit < 3 {
            print("\nNote: this is below libsodium's MODERATE (3 passes over 256 MiB), the shipped default.")
        }
    }
}
