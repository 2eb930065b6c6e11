#!/usr/bin/env bash
# Installs what building and testing keyvaultd needs and this machine lacks:
# the C libraries (libsodium, OpenSSL, SQLite headers), curl (the demo and the
# uid test), util-linux's setpriv and python3 (the independent recovery tool),
# a PostgreSQL server for the PostgreSQL relay tests (scripts/pg-cluster.sh), and
# systemd-analyze (a test verifies dist/keyvaultd.service).
set -euo pipefail
need=()
for pkg in libsodium-dev libssl-dev libsqlite3-dev sqlite3 curl util-linux python3; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || need+=("$pkg")
done
compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || need+=(postgresql)
command -v psql >/dev/null || need+=(postgresql-client)
command -v systemd-analyze >/dev/null || need+=(systemd)  # the unit test verifies dist/keyvaultd.service
[ ${#need[@]} -eq 0 ] && exit 0
echo "installing: ${need[*]}"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}"
