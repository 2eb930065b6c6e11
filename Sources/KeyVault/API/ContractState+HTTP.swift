package import KeyVaultAccount
import KeyVaultEngine
import KeyVaultPolicy

extension ContractState {
    package var httpStatus: Int {
        switch self {
        case .ready: return 200
        case .pending: return 202
        case .locked: return 423
        case .unknown: return 404
        case .revoked: return 403
        case .forbidden: return 403
        case .denied: return 401
        case .throttled: return 429
        case .destroyed: return 410
        case .invalid: return 400
        case .damaged: return 409
        case .error: return 500
        }
    }
}
