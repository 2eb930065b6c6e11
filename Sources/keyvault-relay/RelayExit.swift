import ArgumentParser
import Foundation
import KeyVaultLogging
import KeyVaultRelayService
import Logging

/// How keyvault-relay ends when it cannot go on, with the exit status docs/RELAY.md
/// lists ("Exit status"), so a script or systemd (`RestartPreventExitStatus=`) can
/// tell a setting or a schema to fix from a store that may come back.
enum RelayExit {
    static func status(of error: any Error) -> Int32 {
        switch RelayServer.Failure(error) {
        case .setting: return ExitCode.validationFailure.rawValue
        case .schemaBehind: return 65
        case .schemaAhead: return 66
        case .other: return ExitCode.failure.rawValue
        }
    }

    /// The error to end with: in text, a sentence on standard error (a setting's with the usage,
    /// as ArgumentParser writes a usage error); in json, where every line of standard error is a
    /// log object, one critical object whose `problem` says why.
    static func failure(_ error: any Error, logs: LogSettings, logger: Logger) -> any Error {
        guard logs.format == .json else {
            switch RelayServer.Failure(error) {
            case .setting: return ValidationError("\(error)")
            case .schemaBehind, .schemaAhead:
                FileHandle.standardError.write(Data("Error: \(error)\n".utf8))
                return ExitCode(status(of: error))
            case .other: return error
            }
        }
        logger.critical("keyvault-relay cannot run", metadata: ["problem": "\(error)"])
        return ExitCode(status(of: error))
    }
}
