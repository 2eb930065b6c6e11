#!/usr/bin/env bash
# Every test suite, as `make test` runs them (the test bundle built already: `swift build
# --build-tests`). Most suites spend their time waiting on the daemons and relay servers they
# start (about 60% of two cores is busy), so three run at once, each in a test process of its
# own, taken from one queue (the longest first; KEYVAULT_SUITE_WORKERS sets another number).
# Then, one at a time with nothing beside them, the suites whose assertions bound a time that
# load would stretch (a lock answered within 250 ms, slow clients closed at their deadline, a
# cost that must grow linearly). The suites that stop PostgreSQL
# (an outage) run on a cluster of their own. Every suite runs; any failure
# fails the run, and each suite's output is printed whole when it ends.
set -euo pipefail
cd "$(dirname "$0")/.."

bundle="$(swift build --show-bin-path)/keyvaultdPackageTests.xctest"
workers=${KEYVAULT_SUITE_WORKERS:-3}
# Run alone, after the rest: their assertions bound a time.
alone=(
    IntegrationTests.LockAtOnceTests
    IntegrationTests.HostileClientTests
    KeyVaultTests.VerifiedViewsTests
)
# Each on a PostgreSQL cluster of its own (scripts/with-test-postgres.sh): they stop the
# cluster to test an outage, or read its server-wide transaction counter.
own_cluster=(
    IntegrationTests.OutageTests
    IntegrationTests.RelayConformanceTests
    IntegrationTests.RelayServiceTests
    IntegrationTests.PostgresShardingTests
)
# The longest, started first so that no worker is left with one at the end.
longest=(
    IntegrationTests.RotationCrashTests
    IntegrationTests.HalfDoneTests
    IntegrationTests.RelayServiceTests
    IntegrationTests.OutageTests
    IntegrationTests.RelayConformanceTests
    IntegrationTests.HostileVolumesTests
    IntegrationTests.RotationTests
    IntegrationTests.RelayAnswerBoundsTests
    IntegrationTests.RedTeamTests
)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Suite types by their test IDs (Module.Type/test()); a nested suite runs with its outer type.
"$bundle" --testing-library swift-testing --list-tests 2>/dev/null \
    | sed -n 's#^\([A-Za-z0-9_]*\.[A-Za-z0-9_]*\)/.*#\1#p' | sort -u > "$work/all"
[ -s "$work/all" ] || { echo "run-suites: the test bundle lists no suites" >&2; exit 1; }
for suite in "${alone[@]}" "${own_cluster[@]}" "${longest[@]}"; do
    grep -qx "$suite" "$work/all" || { echo "run-suites: no suite $suite (renamed? update this script)" >&2; exit 1; }
done
{ printf '%s\n' "${longest[@]}"; grep -vxF -f <(printf '%s\n' "${alone[@]}" "${longest[@]}") "$work/all"; } > "$work/queue"
: > "$work/failed"

run_suite() {
    local suite=$1 status=0 wrap=()
    if printf '%s\n' "${own_cluster[@]}" | grep -qx "$suite"; then wrap=(./scripts/with-test-postgres.sh); fi
    NO_COLOR=1 "${wrap[@]}" "$bundle" --testing-library swift-testing --no-parallel --filter "^$suite/" > "$work/$suite.log" 2>&1 || status=$?
    grep -q "Test run with [1-9]" "$work/$suite.log" || { echo "run-suites: $suite ran no test" >> "$work/$suite.log"; status=1; }
    [ "$status" = 0 ] || echo "$suite" >> "$work/failed"
    flock "$work/print" cat "$work/$suite.log"
}

worker() {
    local suite
    while suite=$(flock "$work/queue" sh -c 'head -n 1 "$1" && sed -i 1d "$1"' _ "$work/queue") && [ -n "$suite" ]; do
        run_suite "$suite"
    done
}

started=$(date +%s)
for _ in $(seq "$workers"); do worker & done
wait
for suite in "${alone[@]}"; do run_suite "$suite"; done
# A worker that ended early (its shell failed between suites) leaves suites unrun: each is a failure.
while read -r suite; do
    [ -f "$work/$suite.log" ] || echo "$suite (not run)" >> "$work/failed"
done < "$work/all"

tests=$(cat "$work"/*.log | sed -n 's/.*Test run with \([0-9]*\) tests\{0,1\} .*/\1/p' | awk '{ n += $1 } END { print n + 0 }')
echo "run-suites: $tests tests in $(wc -l < "$work/all") suites in $(( $(date +%s) - started )) s"
if [ -s "$work/failed" ]; then
    echo "run-suites: failed: $(tr '\n' ' ' < "$work/failed")" >&2
    exit 1
fi
