#!/usr/bin/env bash
# Installs what building and testing keyvaultd needs and this machine lacks:
# the C libraries (libsodium, OpenSSL, SQLite headers), curl (the demo and the
# uid test), util-linux's setpriv and python3 (the independent recovery tool),
# a PostgreSQL server for the PostgreSQL relay tests (scripts/pg-cluster.sh),
# systemd-analyze (a test verifies dist/keyvaultd.service), socat and a Python
# venv for the API checks (scripts/fuzz-api.sh), and in .build-venv/ the pinned
# Python packages of scripts/api-check-requirements.txt. The fuzz targets
# (scripts/fuzz.sh) need nothing more: libFuzzer and AddressSanitizer come with
# the Swift toolchain, and they link the same libsodium and OpenSSL.
set -euo pipefail
need=()
for pkg in libsodium-dev libssl-dev openssl libsqlite3-dev sqlite3 curl util-linux python3 python3-venv socat; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || need+=("$pkg")
done
compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || need+=(postgresql)
command -v psql >/dev/null || need+=(postgresql-client)
command -v systemd-analyze >/dev/null || need+=(systemd)  # the unit test verifies dist/keyvaultd.service
if [ ${#need[@]} -gt 0 ]; then
    echo "installing: ${need[*]}"
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}"
fi

# The API checks' venv, made (or made again) only when it is missing or its
# pins changed: the requirements it was made from are kept beside it.
cd "$(dirname "$0")/.."
venv=.build-venv
requirements=scripts/api-check-requirements.txt
if ! cmp -s "$requirements" "$venv/requirements.txt" || ! "$venv/bin/python" -c 'import schemathesis' 2>/dev/null; then
    echo "installing the API checks' Python packages into $venv"
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$requirements"
    cp "$requirements" "$venv/requirements.txt"
fi
