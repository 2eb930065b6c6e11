#!/usr/bin/env bash
# make demo: the main job on the embedded relay. Device A creates an account;
# device B asks to join and its key read says `pending` with the pairing code;
# A approves with that code; B's waiting read returns the same key as A's.
set -euo pipefail
bin="$(swift build --show-bin-path)"
dir="$(mktemp -d /tmp/keyvaultd-demo-XXXXXX)"
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$dir"' EXIT
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

step() { printf '\n\033[1m%s\033[0m\n' "$*"; }
A="$dir/a.sock"; B="$dir/b.sock"
kv_a() { local cmd=$1; shift; "$bin/keyvault" "$cmd" --socket "$A" "$@"; }

step "# Two daemons, device A and device B, on one relay file: $dir/relay.sqlite"
for d in a b; do
    "$bin/keyvaultd" --data-dir "$dir/$d" --socket "$dir/$d.sock" --policy "$dir/policy" --relay "sqlite:$dir/relay.sqlite" 2>"$dir/$d.log" &
    pids+=($!)
done
for s in "$A" "$B"; do for _ in $(seq 100); do [ -S "$s" ] && break; sleep 0.05; done; done

step "A\$ echo passphrase | keyvault account create --account alice --device-name laptop"
echo "passphrase A" | "$bin/keyvault" account create --socket "$A" --account alice --device-name laptop >/dev/null
"$bin/keyvault" key get --socket "$A" --account alice

step "B\$ echo passphrase | keyvault enroll --account alice --device-name phone"
echo "passphrase B" | "$bin/keyvault" enroll --socket "$B" --account alice --device-name phone >"$dir/enroll.json" 2>"$dir/enroll.txt" || true
cat "$dir/enroll.txt"; cat "$dir/enroll.json"
device=$(python3 -c "import json,sys; print(json.load(open('$dir/enroll.json'))['deviceId'])")
code=$(python3 -c "import json,sys; print(json.load(open('$dir/enroll.json'))['pairingCode'])")

step "B\$ curl --unix-socket b.sock http://localhost/v1/accounts/alice/keys/current     # the sync engine asks"
curl -s -i --unix-socket "$B" http://localhost/v1/accounts/alice/keys/current | grep -E '^HTTP|^Retry-After|^\{'

step "B\$ keyvault key get --account alice --wait 30 &     # waits for the key"
"$bin/keyvault" key get --socket "$B" --account alice --wait 30 >"$dir/b-key.json" 2>"$dir/b-wait.txt" &
waiter=$!
sleep 1

step "A\$ keyvault enrollments --account alice"
kv_a enrollments --account alice
step "A\$ keyvault approve --account alice --device-id $device --code $code     # the code B shows"
kv_a approve --account alice --device-id "$device" --code "$code"

wait "$waiter"
cat "$dir/b-wait.txt"
step "B's waiting read returned:"
cat "$dir/b-key.json"
ka=$("$bin/keyvault" key get --socket "$A" --account alice --raw base64)
kb=$(python3 -c "import json; print(json.load(open('$dir/b-key.json'))['key'])")
[ "$ka" = "$kb" ] && echo "B's key equals A's key." || { echo "MISMATCH"; exit 1; }

step "A\$ keyvault devices --account alice"
kv_a devices --account alice
