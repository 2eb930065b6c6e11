#!/usr/bin/env bash
# make demo: one daemon on the embedded default in a temporary folder; an
# account created; its key fetched with the CLI and with curl; the daemon stopped.
set -euo pipefail
bin="$(swift build --show-bin-path)"
dir="$(mktemp -d /tmp/keyvaultd-demo-XXXXXX)"
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$dir"' EXIT
export KEYVAULT_SOCKET="$dir/keyvaultd.sock"
mkdir "$dir/policy"
# The demo trades KDF cost for speed; the shipped policy/ uses libsodium's MODERATE.
cat > "$dir/policy/demo.toml" <<'TOML'
[kdf]
passes = 2
memory_mib = 64

[[rule]]
uid = "self"
accounts = ["*"]
allow = ["*"]
TOML

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }

step keyvaultd --data-dir "$dir/data" --socket "$KEYVAULT_SOCKET" --policy "$dir/policy" "&"
"$bin/keyvaultd" --data-dir "$dir/data" --socket "$KEYVAULT_SOCKET" --policy "$dir/policy" 2>"$dir/daemon.log" &
pid=$!
for _ in $(seq 100); do [ -S "$KEYVAULT_SOCKET" ] && break; sleep 0.05; done

step 'echo "demo passphrase" | keyvault account create --account alice'
echo "demo passphrase" | "$bin/keyvault" account create --account alice

step keyvault key get --account alice
"$bin/keyvault" key get --account alice

step curl --unix-socket "$KEYVAULT_SOCKET" http://localhost/v1/accounts/alice/keys/current
curl -s --unix-socket "$KEYVAULT_SOCKET" http://localhost/v1/accounts/alice/keys/current; echo

step keyvault lock --account alice '&&' keyvault key get --account alice
"$bin/keyvault" lock --account alice >/dev/null
"$bin/keyvault" key get --account alice || echo "(exit $?: locked, as it should be)"

step 'echo "demo passphrase" | keyvault unlock --account alice && keyvault key get --account alice --raw hex'
echo "demo passphrase" | "$bin/keyvault" unlock --account alice >/dev/null
"$bin/keyvault" key get --account alice --raw hex

step kill -TERM keyvaultd
kill -TERM "$pid"; wait "$pid"; echo "keyvaultd exited with $?"
echo; echo "The daemon's log (no key, no passphrase):"; cat "$dir/daemon.log"
