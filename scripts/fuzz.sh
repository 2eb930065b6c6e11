#!/usr/bin/env bash
# Coverage-guided fuzzing of keyvaultd's parsers and of the transitions a party
# outside the device drives, with libFuzzer (Fuzz/README.md).
#
#   scripts/fuzz.sh build               build every target into .build-fuzz/bin/
#   scripts/fuzz.sh run SECONDS [T...]  fuzz each target (or those named) SECONDS
#                                       on its corpus, going on after a crash;
#                                       prints each run's result, exits 1 on a crash
#   scripts/fuzz.sh replay [T...]       every corpus input once, then a brief run
#                                       per target (FUZZ_BRIEF_SECONDS, default 6);
#                                       exits 1 on any crash (make test runs this)
#   scripts/fuzz.sh merge [T...]        keeps in Fuzz/corpus/T/, beside the seeds, the
#                                       fewest inputs of a run (.build-fuzz/corpus/T/)
#                                       that cover what it reached
#   scripts/fuzz.sh seeds               writes the seed inputs (Fuzz/Seeds/) missing from Fuzz/corpus/
#   scripts/fuzz.sh list                the targets
#
# Not through SwiftPM: each module the targets need is compiled once with
# `swiftc -sanitize=fuzzer,address` (coverage and AddressSanitizer, nothing
# rebuilt for the package's dependencies) from the sources as they are:
# KeyVaultCrypto, KeyVaultProtocol, KeyVaultAccount whole; of KeyVaultVault
# RecoveryKit.swift; of KeyVaultRelay the store's wake-up (RelayWake.swift); the policy parser (KeyVaultPolicy), EventBacklog (KeyVaultEngine), and of
# KeyVault the request-body parsers and HTTPExchange, beside stand-ins (Fuzz/Stubs/) for the few Hummingbird and NIO
# types they name. A module is compiled again only when a source of it or of a
# module it imports changed. Everything lands in .build-fuzz/ (FUZZ_BUILD).
# Crashes a run finds are in .build-fuzz/artifacts/T/.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=${FUZZ_BUILD:-$root/.build-fuzz}
swiftc=${SWIFTC:-swiftc}
opt=${FUZZ_OPT:--O}
targets_dir=Fuzz/Targets

all_targets() { for f in "$targets_dir"/*.swift; do basename "$f" .swift; done; }

common=(-swift-version 6 -package-name keyvaultd -parse-as-library -enable-testing
        -sanitize=fuzzer,address "$opt" -g
        -I Sources/CSodium -I Sources/COpenSSL -I "$out/modules")
strict=(-enable-upcoming-feature InternalImportsByDefault -enable-upcoming-feature ExistentialAny)

# module NAME DEPS -- SOURCES...: compiles one module into $out/obj/NAME.o and
# $out/modules/NAME.swiftmodule, unless neither its sources (nor their list)
# nor a module it depends on changed since.
module() {
    local name=$1 deps=$2
    shift 3
    local obj="$out/obj/$name.o" list="$out/obj/$name.sources"
    local sources
    sources=$(printf '%s\n' "$@")
    local stale=0
    if [ ! -f "$obj" ] || [ ! -f "$list" ] || [ "$(cat "$list")" != "$sources" ]; then
        stale=1
    else
        for f in "$@"; do [ "$f" -nt "$obj" ] && { stale=1; break; }; done
        for d in $deps; do [ "$out/obj/$d.o" -nt "$obj" ] && { stale=1; break; }; done
    fi
    [ $stale = 1 ] || return 0
    echo "fuzz: compiling $name ($# files)"
    local flags=()
    case $name in
        KeyVault*|FuzzSupport) flags=("${strict[@]}") ;;
    esac
    rm -f "$obj"
    "$swiftc" "${common[@]}" "${flags[@]}" -module-name "$name" -wmo -c \
        -emit-module -emit-module-path "$out/modules/$name.swiftmodule" -o "$obj" "$@" 2>&1 \
        | grep -v -e ': warning: ' -e '^ *[0-9]* |' -e '^ *|' -e '^$' || true
    [ -f "$obj" ] || { echo "fuzz: $name did not compile" >&2; exit 2; }
    printf '%s\n' "$sources" > "$list"
}

swift_files() { find "$@" -name '*.swift' | LC_ALL=C sort; }

# The daemon's files the targets compile: the policy's parser (KeyVaultPolicy), the engine's
# event backlog (KeyVaultEngine), and of the socket API (KeyVault) the request-body parsers and
# HTTPExchange; the rest of Sources/KeyVault needs Hummingbird and NIO.
policy_files=(
    Sources/KeyVaultPolicy/TOMLParser.swift Sources/KeyVaultPolicy/TOMLDocument.swift
    Sources/KeyVaultPolicy/PolicyError.swift Sources/KeyVaultPolicy/PolicyLoader.swift
    Sources/KeyVaultPolicy/Policy.swift Sources/KeyVaultPolicy/Permission.swift
    Sources/KeyVaultPolicy/PeerCredentials.swift
)
daemon_files=(
    Sources/KeyVault/API/SecretBody.swift Sources/KeyVault/API/RequestBodies.swift
    Sources/KeyVault/API/HTTPExchange.swift
    Fuzz/Stubs/KeyVaultDaemon.swift
)

build() {
    command -v "$swiftc" >/dev/null || { echo "fuzz: no swiftc on PATH" >&2; exit 2; }
    local toolchain
    toolchain=$(dirname "$(readlink -f "$(command -v "$swiftc")")")/..
    compgen -G "$toolchain/lib/clang/*/lib/linux/libclang_rt.fuzzer-*.a" >/dev/null \
        || { echo "fuzz: the Swift toolchain at $toolchain has no libFuzzer runtime" >&2; exit 2; }
    mkdir -p "$out/modules" "$out/obj" "$out/bin"
    local start=$SECONDS
    # shellcheck disable=SC2046
    module KeyVaultCrypto "" -- $(swift_files Sources/KeyVaultCrypto)
    # shellcheck disable=SC2046
    module KeyVaultIDs "" -- $(swift_files Sources/KeyVaultIDs)
    # shellcheck disable=SC2046
    module KeyVaultProtocol "KeyVaultIDs KeyVaultCrypto" -- $(swift_files Sources/KeyVaultProtocol)
    # shellcheck disable=SC2046
    module KeyVaultAccount "KeyVaultProtocol" -- $(swift_files Sources/KeyVaultAccount)
    # shellcheck disable=SC2046
    module KeyVaultRelayWire "KeyVaultProtocol" -- $(swift_files Sources/KeyVaultRelayWire)
    module KeyVaultVault "KeyVaultAccount" -- Sources/KeyVaultVault/RecoveryKit.swift
    module NIOCore "" -- Fuzz/Stubs/NIOCore.swift
    module NIOHTTP1 "" -- Fuzz/Stubs/NIOHTTP1.swift
    module Hummingbird "NIOCore" -- Fuzz/Stubs/Hummingbird.swift
    module KeyVaultRelay "KeyVaultProtocol" -- Sources/KeyVaultRelay/RelayWake.swift
    module KeyVaultRelayClient "" -- Fuzz/Stubs/Empty.swift
    module KeyVaultPolicy "KeyVaultAccount" -- "${policy_files[@]}"
    module KeyVaultEngine "KeyVaultAccount" -- Sources/KeyVaultEngine/Sync/EventBacklog.swift
    module KeyVault "KeyVaultVault KeyVaultPolicy KeyVaultEngine Hummingbird NIOHTTP1 KeyVaultRelay KeyVaultRelayClient" -- "${daemon_files[@]}"
    # shellcheck disable=SC2046
    module FuzzSupport "KeyVaultAccount" -- $(swift_files Fuzz/Support)
    local objects=("$out"/obj/*.o)
    local t pids=()
    for t in $(all_targets); do
        local bin="$out/bin/$t" src="$targets_dir/$t.swift"
        local stale=0
        [ -f "$bin" ] && [ ! "$src" -nt "$bin" ] || stale=1
        for o in "${objects[@]}"; do [ "$o" -nt "$bin" ] && stale=1; done
        [ $stale = 1 ] || continue
        echo "fuzz: linking $t"
        rm -f "$bin"
        # Two at a time: the machine has two cores.
        "$swiftc" "${common[@]}" "${strict[@]}" -module-name "fuzz_$t" "$src" "${objects[@]}" \
            -lsodium -lcrypto -o "$bin" 2>&1 | grep -v -e ': warning: ' -e '^ *[0-9]* |' -e '^ *|' -e '^$' || true &
        pids+=($!)
        if [ ${#pids[@]} -ge 2 ]; then wait "${pids[0]}"; pids=("${pids[@]:1}"); fi
    done
    for p in "${pids[@]}"; do wait "$p"; done
    for t in $(all_targets); do [ -x "$out/bin/$t" ] || { echo "fuzz: target $t did not build" >&2; exit 2; }; done
    echo "fuzz: built in $((SECONDS - start)) s"
}

# Options every run shares: a slow input is a finding (25 s), and so is memory past 2 GiB.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=0:symbolize=1}
# libFuzzer saves and reports a trap itself; the Swift runtime's backtracer would only hold the crashed process up.
export SWIFT_BACKTRACE=${SWIFT_BACKTRACE:-enable=no}
libfuzzer_options=(-timeout=25 -rss_limit_mb=2048 -print_final_stats=1)

targets_or_all() { if [ $# -gt 0 ]; then printf '%s\n' "$@"; else all_targets; fi; }

run() {
    local seconds=${1:?usage: scripts/fuzz.sh run SECONDS [TARGET...]}
    shift
    build
    local t failed=0
    for t in $(targets_or_all "$@"); do
        local corpus="$out/corpus/$t" artifacts="$out/artifacts/$t/" log="$out/logs/$t.log"
        mkdir -p "$corpus" "$artifacts" "$out/logs" "Fuzz/corpus/$t"
        echo "fuzz: $t for ${seconds}s (log: $log)"
        local before after
        before=$(find "$artifacts" -type f | wc -l)
        # -fork=1 with -ignore_crashes: a crash is saved and fuzzing goes on.
        "$out/bin/$t" "${libfuzzer_options[@]}" -max_total_time="$seconds" -fork=1 -ignore_crashes=1 -ignore_timeouts=1 \
            -ignore_ooms=1 -artifact_prefix="$artifacts" "$corpus" "Fuzz/corpus/$t" >"$log" 2>&1 || true
        after=$(find "$artifacts" -type f | wc -l)
        local stats
        stats=$(grep -E '^#[0-9]+: cov:' "$log" | tail -1 || true)
        echo "fuzz: $t: ${stats:-no stats (see $log)}"
        grep -E 'stat::number_of_executed_units|stat::peak_rss_mb' "$log" | tail -2 | sed "s/^/fuzz: $t: /" || true
        if [ "$after" -gt "$before" ]; then
            echo "fuzz: $t: $((after - before)) new crash/timeout/oom input(s) in $artifacts"
            failed=1
        fi
    done
    return $failed
}

replay() {
    build
    local brief=${FUZZ_BRIEF_SECONDS:-6}
    local t failed=()
    for t in $(targets_or_all "$@"); do
        local corpus="Fuzz/corpus/$t" work="$out/replay/$t" artifacts="$out/artifacts/replay/$t/" log="$out/logs/replay-$t.log"
        mkdir -p "$corpus" "$artifacts" "$out/logs"
        rm -rf "$work" && mkdir -p "$work"
        local ok=1
        # Every input of the corpus once, then a brief run from it (into a scratch corpus).
        if ! "$out/bin/$t" "${libfuzzer_options[@]}" -runs=0 -artifact_prefix="$artifacts" "$corpus" >"$log" 2>&1; then
            ok=0
        elif ! "$out/bin/$t" "${libfuzzer_options[@]}" -max_total_time="$brief" -artifact_prefix="$artifacts" \
                "$work" "$corpus" >>"$log" 2>&1; then
            ok=0
        fi
        rm -rf "$work"
        if [ $ok = 1 ]; then
            echo "fuzz replay: $t ok ($(find "$corpus" -type f | wc -l) inputs, $(grep -E 'stat::number_of_executed_units' "$log" | tail -1 | awk '{print $2}') runs)"
        else
            echo "fuzz replay: $t FAILED; the end of $log:" >&2
            tail -40 "$log" >&2
            failed+=("$t")
        fi
    done
    if [ ${#failed[@]} -gt 0 ]; then
        echo "fuzz replay: crashed: ${failed[*]} (inputs in $out/artifacts/replay/)" >&2
        return 1
    fi
}

merge() {
    build
    local t
    for t in $(targets_or_all "$@"); do
        [ -d "$out/corpus/$t" ] || continue
        local corpus="Fuzz/corpus/$t" merged="$out/merge/$t"
        mkdir -p "$corpus"
        rm -rf "$merged" && mkdir -p "$merged"
        # The fewest inputs that keep every edge (hit counts aside) of the committed corpus and the run's.
        "$out/bin/$t" -set_cover_merge=1 -use_counters=0 -timeout=25 "$merged" "$corpus" "$out/corpus/$t" >"$out/logs/merge-$t.log" 2>&1
        # Seeds and regression inputs stay; what earlier merges added is replaced by this one's.
        find "$corpus" -type f ! -name 'seed-*' ! -name 'regression-*' -delete
        local kept
        kept=$(find "$corpus" -type f -exec sha1sum {} + | cut -d' ' -f1 | sort)
        local f
        for f in "$merged"/*; do
            [ -f "$f" ] || continue
            grep -qx "$(basename "$f")" <<<"$kept" || cp "$f" "$corpus/"
        done
        rm -rf "$merged"
        echo "fuzz merge: $t: $(find "$corpus" -type f | wc -l) inputs, $(cat "$corpus"/* | wc -c) bytes"
    done
}

seeds() {
    build
    # The seed writer links the same instrumented modules, without libFuzzer's main.
    local bin="$out/bin/make-seeds"
    "$swiftc" -swift-version 6 -package-name keyvaultd -parse-as-library -sanitize=address "$opt" -g \
        -I Sources/CSodium -I Sources/COpenSSL -I "$out/modules" "${strict[@]}" -module-name make_seeds \
        Fuzz/Seeds/make-seeds.swift "$out"/obj/*.o -lsodium -lcrypto -o "$bin" 2>&1 | grep -v -e 'Cannot export local symbol' -e ': warning: ' || true
    "$bin" Fuzz/corpus Tests/KeyVaultTests/vectors/protocol.json
}

main() {
    case ${1:-} in
        build) build ;;
        run) shift; run "$@" ;;
        replay) shift; replay "$@" ;;
        merge) shift; merge "$@" ;;
        seeds) seeds ;;
        list) all_targets ;;
        *) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
    esac
}

# One line, read whole before it runs: editing this file during a long run cannot change what the run does next.
main "$@"; exit
