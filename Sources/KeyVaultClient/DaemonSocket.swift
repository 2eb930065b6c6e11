public import KeyVaultUnixSocket

/// Where the daemon's socket is when no one says (`defaultPath`), and where a
/// client looks (`clientPath`: `$KEYVAULT_SOCKET` first). The daemon shares it.
public typealias DaemonSocket = KeyVaultUnixSocket.DaemonSocket
