#!/usr/bin/env bash
# Runs CMD... with a throwaway PostgreSQL cluster: exports KEYVAULT_TEST_POSTGRES
# (its URL) and KEYVAULT_TEST_PG_DIR (for scripts/pg-cluster.sh stop/start in
# the outage tests), and always stops and removes the cluster afterwards.
# Exits with CMD's status.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/keyvault-pg-XXXXXX")
cleanup() { "$here/pg-cluster.sh" remove "$dir" >/dev/null 2>&1 || true; }
trap cleanup EXIT
trap 'exit 130' INT TERM
KEYVAULT_TEST_POSTGRES=$("$here/pg-cluster.sh" start "$dir")
export KEYVAULT_TEST_POSTGRES
export KEYVAULT_TEST_PG_DIR="$dir"
echo "test PostgreSQL: $KEYVAULT_TEST_POSTGRES ($dir)"
status=0
"$@" || status=$?
exit $status
