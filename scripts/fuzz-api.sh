#!/usr/bin/env bash
# Fuzzes a running keyvaultd against docs/openapi.yaml with schemathesis.
#
#   scripts/fuzz-api.sh KEYVAULTD_BINARY
#
# Starts the daemon in a temporary folder (removed on exit) with an embedded
# relay (so the enrollment, device and rotation routes do real work) and a
# policy with a cheap KDF, creates the spec's example accounts (so the examples
# phase reads, seals and deletes accounts that exist), bridges a loopback TCP
# port to its Unix socket and runs schemathesis with the checks: no 5xx,
# status code, content type, response headers (Retry-After) and response
# schema conformance. Prints the number of cases run; exits non-zero on any
# failure, or if the daemon died or its log shows a crash.
#
# Environment: FUZZ_MAX_EXAMPLES (cases per operation in the fuzzing phase,
# default 50), FUZZ_SEED (a seed, to replay a run), FUZZ_REPORT_DIR (keep a HAR
# of every request and answer there).
set -euo pipefail

binary=${1:?usage: scripts/fuzz-api.sh KEYVAULTD_BINARY}
[ -x "$binary" ] || { echo "fuzz-api: $binary is not an executable" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
venv="$root/.build-venv"
[ -x "$venv/bin/schemathesis" ] || { echo "fuzz-api: $venv has no schemathesis; run scripts/install-deps.sh" >&2; exit 2; }
command -v socat >/dev/null || { echo "fuzz-api: socat is missing; run scripts/install-deps.sh" >&2; exit 2; }

work=$(mktemp -d /tmp/kv-fuzz-XXXXXX)
daemon_pid="" bridge_pid=""
cleanup() {
    # Only the processes this script started, by their ids.
    if [ -n "$bridge_pid" ]; then kill "$bridge_pid" 2>/dev/null; wait "$bridge_pid" 2>/dev/null || true; fi
    if [ -n "$daemon_pid" ]; then kill "$daemon_pid" 2>/dev/null; wait "$daemon_pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

# The longest ?wait= the daemon takes. Waits only ever block on a daemon with a
# relay (a generation or key ID not heard of yet is waited for), so a fuzzed
# keys/N?wait=W holds W seconds. Capping it low here keeps the run short, and
# any larger W is answered `invalid` at once; the request timeout below must
# stay above both this and approve's 30 s wait for a new device's confirmation.
max_wait=2
request_timeout=45

mkdir -p "$work/policy"
cat > "$work/policy/fuzz.toml" <<EOF
# Tests only: an Argon2id cost below one MiB, so fuzzed account creations and unlocks are cheap.
[kdf-test]
passes = 1
memory_kib = 64

[limits]
max_wait_seconds = $max_wait

[[rule]]
uid = "self"
accounts = ["*"]
allow = ["*"]
EOF

socket="$work/kv.sock"
log="$work/daemon.log"
"$binary" --data-dir "$work/data" --socket "$socket" --policy "$work/policy" \
    --relay "sqlite:$work/relay.sqlite" > "$log" 2>&1 &
daemon_pid=$!

ready=""
for _ in $(seq 1 200); do
    if ! kill -0 "$daemon_pid" 2>/dev/null; then break; fi
    if curl -fsS --unix-socket "$socket" -o /dev/null http://localhost/v1/health 2>/dev/null; then ready=1; break; fi
    sleep 0.05
done
if [ -z "$ready" ]; then
    echo "fuzz-api: keyvaultd did not answer /v1/health; its log:" >&2
    cat "$log" >&2
    exit 1
fi

# socat, not a hand-written relay: one Unix connection per TCP connection
# (`fork`), so keep-alive and per-connection peer credentials behave as for a
# local client, and it passes a half-close on as it comes.
port=$("$venv/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
socat "TCP-LISTEN:$port,bind=127.0.0.1,reuseaddr,fork" "UNIX-CONNECT:$socket" &
bridge_pid=$!
for _ in $(seq 1 100); do
    curl -fsS -o /dev/null "http://127.0.0.1:$port/v1/health" 2>/dev/null && break
    sleep 0.05
done

# The spec's example accounts (components/parameters/User, and deleteAccount's
# own), made with the spec's example passphrase, so the examples phase reads,
# seals, unlocks and deletes accounts that exist. afterFirstUnlock: its keys
# stay readable after a fuzzed lock, so reads keep reaching `ready`.
for account in 001234.abcd.0567 000000.to.delete; do
    created=$(printf '{"user":"%s","passphrase":"correct horse battery staple","accessibility":"afterFirstUnlock"}' "$account" |
        curl -sS --unix-socket "$socket" --data-binary @- -o /dev/null -w '%{http_code}' http://localhost/v1/accounts)
    [ "$created" = 200 ] || { echo "fuzz-api: creating $account answered $created" >&2; cat "$log" >&2; exit 1; }
done

# Two runs. The first, every operation but the event stream, which never ends by
# itself: a request to it ends at the request timeout, which the first run keeps
# long. The second, the event stream alone, each request read for 2 s: schemathesis
# checks each event it parsed against the spec's `itemSchema` (the event's name,
# its id, and its `data` line as JSON against the schema the name fixes).
# Run from the temporary folder: schemathesis keeps state (.schemathesis/) in its working folder.
report_dir=${FUZZ_REPORT_DIR:+$(realpath -m "$FUZZ_REPORT_DIR")}
cd "$work"
set +e
fuzz() {
    "$venv/bin/schemathesis" run "$root/docs/openapi.yaml" \
        --url "http://127.0.0.1:$port" \
        --checks not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance \
        --phases examples,coverage,fuzzing \
        ${FUZZ_SEED:+--seed "$FUZZ_SEED"} \
        --workers 1 \
        --generation-database none \
        --suppress-health-check all \
        --no-color ${report_dir:+--report har --report-dir "$report_dir"} "$@"
}
fuzz --exclude-path-regex '/events$' --max-examples "${FUZZ_MAX_EXAMPLES:-50}" --request-timeout "$request_timeout" 2>&1 | tee "$work/schemathesis.out"
status=${PIPESTATUS[0]}
fuzz --include-path-regex '/events$' --max-examples "${FUZZ_STREAM_EXAMPLES:-10}" --request-timeout 2 2>&1 | tee -a "$work/schemathesis.out"
stream_status=${PIPESTATUS[0]}
[ "$status" != 0 ] || status=$stream_status
set -e

# schemathesis's closing summaries: "Test cases:" then "N generated, …", once a run.
cases=$({ grep -A1 '^Test cases:' "$work/schemathesis.out" || true; } | { grep -Eo '[0-9]+ generated' || true; } | { grep -Eo '[0-9]+' || true; } |
    awk '{ n += $1 } END { print (NR ? n : "?") }')
echo "fuzz-api: schemathesis ran $cases cases (exit $status)"

problem=""
if ! kill -0 "$daemon_pid" 2>/dev/null; then
    problem="keyvaultd is no longer running"
elif grep -Eq 'Fatal error|Program crashed|Segmentation fault|Illegal instruction|Assertion failed|Precondition failed|Stack dump' "$log"; then
    problem="keyvaultd's log shows a crash"
fi
if [ -n "$problem" ]; then
    echo "fuzz-api: $problem; its log:" >&2
    tail -n 100 "$log" >&2
    exit 1
fi
exit "$status"
