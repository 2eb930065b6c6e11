extension KeyVaultClient {
    /// Sends a request on a kept connection, or on a new one checked first
    /// (`SocketTrust`), and answers as its head arrives; `timeout` bounds the head.
    ///
    /// A kept connection the daemon has closed (to make room, or restarting) is
    /// replaced without failing the request, as long as not a byte of it went
    /// out (`ConnectionFailure.notSent`). A request that may have reached the
    /// daemon is never sent twice; one that fails on a new connection is not tried again.
    func exchange(_ request: DaemonRequest, timeout: Duration) async throws -> OpenAnswer {
        // `$KEYVAULT_DAEMON_UID` is read at each request: a changed one is met with connections checked for it.
        let key = ConnectionPool.Key(socketPath: configuration.socketPath, daemonUID: try configuration.daemonUID.resolved())
        // Ends: each turn that fails takes a kept connection away, and the last turn makes a new one.
        while true {
            let kept = connections.take(key)
            let connection: DaemonConnection
            do {
                if let kept { connection = kept } else { connection = try await DaemonConnection.open(key) }
            } catch {
                throw Self.reachError(error, socket: key.socketPath)
            }
            do {
                return try OpenAnswer(try await connection.send(request, timeout: timeout), on: connection)
            } catch ConnectionFailure.notSent where kept != nil {
                connection.close()
            } catch {
                connection.close()
                throw Self.reachError(error, socket: key.socketPath)
            }
        }
    }

    /// The request's whole answer; its connection kept if the answer leaves it open.
    func exchangeWhole(_ request: DaemonRequest, timeout: Duration) async throws -> DaemonResponse {
        var answer = try await exchange(request, timeout: timeout)
        let body: [UInt8]
        do {
            body = try await answer.collect(upTo: Self.maxAnswerBytes)
        } catch {
            answer.connection.close()
            throw Self.reachError(error, socket: configuration.socketPath)
        }
        if answer.leavesConnectionOpen {
            connections.put(answer.connection)
        } else {
            answer.connection.close()
        }
        return DaemonResponse(status: Int(answer.head.status.code), headers: answer.head.headers.map { ($0.name, $0.value) }, body: body)
    }
}
