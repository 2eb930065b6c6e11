/// The engine's parts: each a value over the one `KeyVaultService`, with the
/// jobs of one concern (propagation, publishing, enrollment, rotation, …) and the
/// stores it uses. A part calls another part's job by naming that part
/// (`service.rotations.promoteDue(id)`), so a call says where it goes.
extension KeyVaultService {
    package var propagation: Propagation { Propagation(service: self) }
    package var publishing: Publishing { Publishing(service: self) }
    var relayAudit: RelayAudit { RelayAudit(service: self) }
    package var enrolling: Enrollments { Enrollments(service: self) }
    package var rotations: Rotations { Rotations(service: self) }
    package var envelopes: Envelopes { Envelopes(service: self) }
    package var exports: Exports { Exports(service: self) }
    package var founding: Founding { Founding(service: self) }
    package var recoveryKits: RecoveryKits { RecoveryKits(service: self) }
}
