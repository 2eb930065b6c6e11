// An empty module: the daemon's policy files import KeyVaultRelay and
// KeyVaultRelayClient without using them; this stands in for both in a fuzz build.
public enum FuzzEmptyModule {}
