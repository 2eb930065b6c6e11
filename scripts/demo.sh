#!/usr/bin/env bash
# make demo: the main job on the embedded relay. Device A creates an account;
# device B asks to join and its key read says `pending` with the pairing code;
# A approves with that code; B's waiting read returns the same key as A's.
# Then the two journeys a user walks first: a device on its own that later
# meets the relay and gains a second device, and an account restored from its
# recovery kit after every device is lost.
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

# pair NEW_SOCKET APPROVER_SOCKET ACCOUNT NAME: NEW asks to join; APPROVER approves with the code NEW shows.
pair() {
    echo "passphrase $4" | "$bin/keyvault" enroll --socket "$1" --account "$3" --device-name "$4" >"$dir/pair.json" 2>/dev/null || true
    local device code
    device=$(python3 -c "import json; print(json.load(open('$dir/pair.json'))['deviceId'])")
    code=$(python3 -c "import json; print(json.load(open('$dir/pair.json'))['pairingCode'])")
    for _ in $(seq 100); do "$bin/keyvault" enrollments --socket "$2" --account "$3" 2>/dev/null | grep -q "$device" && break; sleep 0.1; done
    "$bin/keyvault" approve --socket "$2" --account "$3" --device-id "$device" --code "$code" >/dev/null
    echo "approved $4 ($device) with code $code"
}
start() {  # start NAME [--relay …]: a daemon in $dir/NAME, its socket $dir/NAME.sock
    local name=$1; shift
    "$bin/keyvaultd" --data-dir "$dir/$name" --socket "$dir/$name.sock" --policy "$dir/policy" "$@" 2>>"$dir/$name.log" &
    pids+=($!)
    eval "pid_$name=$!"
    for _ in $(seq 100); do [ -S "$dir/$name.sock" ] && break; sleep 0.05; done
}
stop() { local p; eval "p=\$pid_$1"; kill "$p"; wait "$p" 2>/dev/null || true; rm -f "$dir/$1.sock"; }
same() { [ "$1" = "$2" ] && echo "$3" || { echo "MISMATCH: $3"; exit 1; }; }

step "# Journey 1: one device first (no relay), a second one later"
start solo
echo "passphrase S" | "$bin/keyvault" account create --socket "$dir/solo.sock" --account carol --device-name desktop >/dev/null
"$bin/keyvault" rotate --socket "$dir/solo.sock" --account carol >/dev/null
step "solo\$ keyvault devices --account carol     # on its own: no relay"
"$bin/keyvault" devices --socket "$dir/solo.sock" --account carol
stop solo
step "# solo restarts with the relay; its unlock founds carol's circle there"
start solo --relay "sqlite:$dir/relay.sqlite"
echo "passphrase S" | "$bin/keyvault" unlock --socket "$dir/solo.sock" --account carol >/dev/null
for _ in $(seq 100); do "$bin/keyvault" export --socket "$dir/solo.sock" --account carol | grep -q '"genesis"' && break; sleep 0.1; done
start second --relay "sqlite:$dir/relay.sqlite"
step "second\$ keyvault enroll --account carol; solo\$ keyvault approve …"
pair "$dir/second.sock" "$dir/solo.sock" carol tablet
same "$("$bin/keyvault" key get --socket "$dir/solo.sock" --account carol --raw base64)" \
     "$("$bin/keyvault" key get --socket "$dir/second.sock" --account carol --wait 30 --raw base64)" "tablet has carol's current key (generation 2, made alone)."
step "solo\$ keyvault rotate --account carol --promote now"
"$bin/keyvault" rotate --socket "$dir/solo.sock" --account carol --promote now
same "$("$bin/keyvault" key get --socket "$dir/solo.sock" --account carol --raw base64)" \
     "$("$bin/keyvault" key get --socket "$dir/second.sock" --account carol --generation 3 --wait 30 --raw base64)" "the rotation reached tablet."

step "# Journey 2: every device lost; the account restored from its recovery kit"
printf 'kit passphrase\n' >"$dir/kitpass"
step "A\$ keyvault export --account alice --recovery-kit kit.bin     # adds the kit's own member to the circle"
kv_a export --account alice --recovery-kit "$dir/kit.bin" --kit-passphrase-file "$dir/kitpass"
before=$("$bin/keyvault" key get --socket "$A" --account alice --raw base64)
step "# A and B are lost: both daemons stopped, both vaults deleted"
for p in "${pids[@]:0:2}"; do kill "$p" 2>/dev/null || true; done
sleep 0.5; rm -rf "$dir/a" "$dir/b"
start restored --relay "sqlite:$dir/relay.sqlite"
printf 'passphrase R\n' >"$dir/rpass"
step "restored\$ keyvault import --recovery-kit kit.bin     # re-joins alice's circle, approved by the kit's member"
"$bin/keyvault" import --socket "$dir/restored.sock" --recovery-kit "$dir/kit.bin" --kit-passphrase-file "$dir/kitpass" \
    --passphrase-file "$dir/rpass" --device-name restored
same "$before" "$("$bin/keyvault" key get --socket "$dir/restored.sock" --account alice --raw base64)" "the restored device reads alice's key."
"$bin/keyvault" devices --socket "$dir/restored.sock" --account alice
start newphone --relay "sqlite:$dir/relay.sqlite"
step "newphone\$ keyvault enroll --account alice; restored\$ keyvault approve …"
pair "$dir/newphone.sock" "$dir/restored.sock" alice newphone
step "restored\$ keyvault revoke …     # the lost devices, one by one (each rotates)"
for lost in $("$bin/keyvault" devices --socket "$dir/restored.sock" --account alice | python3 -c "
import json,sys
for d in json.load(sys.stdin)['devices']:
    if d['status'] == 'trusted' and d['deviceName'] in ('laptop', 'phone'): print(d['deviceId'])"); do
    "$bin/keyvault" revoke --socket "$dir/restored.sock" --account alice --device-id "$lost"
done
same "$("$bin/keyvault" key get --socket "$dir/restored.sock" --account alice --raw base64)" \
     "$(sleep 1; "$bin/keyvault" key get --socket "$dir/newphone.sock" --account alice --wait 30 --raw base64)" "newphone has alice's key after the lost devices were revoked."
