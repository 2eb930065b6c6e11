// Compiled into the fuzz build's `KeyVault` module beside the daemon's own
// parser files: what they name from the rest of the daemon (which needs
// Hummingbird and NIO), reduced to what the parsers use.
package struct VaultRequestContext {
    package init() {}
    package var maxUploadSize: Int { 64 * 1024 }
}
