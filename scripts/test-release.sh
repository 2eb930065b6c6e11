#!/usr/bin/env bash
# The release runs without the toolchain: the archive `make release` made is unpacked
# and its daemon, CLI and relay service are run in a mount namespace where the
# toolchain's folder is an empty tmpfs. Needs root (unshare --mount), as make test has.
set -euo pipefail
cd "$(dirname "$0")/.."
archive=$(ls -t .build/release-archive/keyvaultd-*.tar.gz | head -n 1)
(cd "$(dirname "$archive")" && sha256sum --check --quiet "$(basename "$archive").sha256")
# The toolchain's own folder (/opt/swift for /opt/swift/usr/bin/swiftc), never a system one.
toolchain=$(dirname "$(dirname "$(dirname "$(readlink -f "$(command -v swiftc)")")")")
case "$toolchain" in /|/usr|/usr/local) echo "test-release: the toolchain is in $toolchain, which cannot be hidden" >&2; exit 1 ;; esac
work=$(mktemp -d /tmp/kvrelease-XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
tar -xzf "$archive" -C "$work"
root=$(echo "$work"/keyvaultd-*)
(cd "$root" && sha256sum --check --quiet SHA256SUMS)
# The documents the archive's README points at are in it, and it points at no site.
for doc in README.md API.md CLIENT.md openapi.yaml RELAY.md; do
    [ -s "$root/share/doc/keyvaultd/$doc" ] || { echo "test-release: the archive has no share/doc/keyvaultd/$doc" >&2; exit 1; }
    grep -q "$doc" "$root/README" || { echo "test-release: the archive's README does not name $doc" >&2; exit 1; }
done
if grep -n "https://" "$root/README" >&2; then echo "test-release: the archive's README links to a site, not to its files" >&2; exit 1; fi

unshare --mount --propagation private -- bash -euo pipefail -c '
    toolchain=$1 root=$2 work=$3
    trap '"'"'kill $(jobs -p) 2>/dev/null || true'"'"' EXIT
    mount -t tmpfs -o size=1m,mode=0755 none "$toolchain"
    [ -z "$(ls -A "$toolchain")" ] || { echo "the toolchain folder is still visible" >&2; exit 1; }
    command -v swift >/dev/null 2>&1 && { echo "swift is still runnable" >&2; exit 1; }
    bin=$root/bin
    for tool in keyvaultd keyvault keyvault-relay; do
        echo "$tool --version: $("$bin/$tool" --version)"
    done

    # The daemon and its CLI: an account, its key, a rotation on one device.
    mkdir -m 0700 "$work/run" "$work/policy"
    printf "[kdf-test]\npasses = 1\nmemory_kib = 64\n\n[[rule]]\nuid = \"self\"\naccounts = [\"*\"]\nallow = [\"*\"]\n" > "$work/policy/test.toml"
    "$bin/keyvaultd" --data-dir "$work/data" --socket "$work/run/kv.sock" --policy "$work/policy" > "$work/daemon.log" 2>&1 &
    export KEYVAULT_SOCKET=$work/run/kv.sock
    for _ in $(seq 100); do "$bin/keyvault" health > /dev/null 2>&1 && break; sleep 0.1; done
    "$bin/keyvault" health
    printf "release passphrase\n" > "$work/pass"
    "$bin/keyvault" account create --account release --passphrase-file "$work/pass" > /dev/null
    key=$("$bin/keyvault" key get --account release --raw hex)
    [ ${#key} -eq 64 ] || { echo "no key from the released daemon" >&2; exit 1; }
    "$bin/keyvault" rotate --account release > /dev/null
    [ "$("$bin/keyvault" key get --account release --raw hex)" != "$key" ] || { echo "the rotation did not change the key" >&2; exit 1; }
    echo "daemon: an account, its key, a rotation: ok"

    # The Python client from the archive'"'"'s wheel, in a fresh virtual environment, reads the same key.
    python3 -m venv "$work/venv"
    "$work/venv/bin/pip" install --quiet "$root"/share/keyvaultd/python/keyvault_client-*.whl
    pykey=$("$work/venv/bin/python" -c "from keyvault_client import KeyVault; print(KeyVault().ready_key(\"release\", timeout=10).hex())")
    [ "$pykey" = "$("$bin/keyvault" key get --account release --raw hex)" ] || { echo "the Python client read another key: $pykey" >&2; exit 1; }
    echo "python client (the archive'"'"'s wheel, a fresh venv): the key: ok"

    # The relay service, on a SQLite store, answers its health check.
    # A public key of no one in particular: the relay wants a key set with a key ID to start.
    cat > "$work/jwks.json" <<JWKS
{"keys": [{"kty": "EC", "crv": "P-256", "x": "WjDijfSF_9FLzBzoh6bceWfpcZm1y5_ROnvVegHhIIA",
           "y": "KgsQdcuET-q4Kwej-9KN_mbLp3V7oRXKxUx3wTGXhF4", "kid": "release-test", "alg": "ES256", "use": "sig"}]}
JWKS
    relay_settings=(--store "sqlite:$work/relay.sqlite" --listen 127.0.0.1:0 --plain-http
        --identity-issuer https://issuer.example --identity-audience app.example --identity-jwks "$work/jwks.json")
    # The schema as its own step, then the settings checked as a start reads them.
    "$bin/keyvault-relay" migrate --store "sqlite:$work/relay.sqlite" | tail -n 1
    "$bin/keyvault-relay" check-config "${relay_settings[@]}" | tail -n 1
    "$bin/keyvault-relay" "${relay_settings[@]}" > "$work/relay.out" 2> "$work/relay.log" &
    for _ in $(seq 100); do grep -qo "127.0.0.1:[0-9]*" "$work/relay.out" "$work/relay.log" 2>/dev/null && break; sleep 0.1; done
    address=$(grep -ho "127.0.0.1:[0-9]*" "$work/relay.out" "$work/relay.log" | grep -v ":0$" | head -n 1 || true)
    [ -n "$address" ] || { echo "the relay did not say where it listens" >&2; cat "$work/relay.log" >&2; exit 1; }
    curl -fsS "http://$address/v1/health"; echo
    echo "relay: health: ok"
' bash "$toolchain" "$root" "$work"
echo "release: $(basename "$archive"), $(du -h "$archive" | cut -f1), runs with $toolchain hidden"
