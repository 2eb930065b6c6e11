#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for tests, in DIR:
#   pg-cluster.sh start DIR   create it if new (port chosen once, kept in DIR/port),
#                             start it, print its URL (also written to DIR/url)
#   pg-cluster.sh stop DIR    stop it (fast); `start DIR` brings the same cluster back
#   pg-cluster.sh env DIR     print KEYVAULT_TEST_POSTGRES=... and KEYVAULT_TEST_PG_DIR=...
#   pg-cluster.sh remove DIR  stop it and delete DIR
# PostgreSQL refuses to run as root, so as root the server runs as the
# `postgres` system user (Debian's package creates it). Loopback only, trust
# auth: it holds test rows and nothing else.
set -euo pipefail

usage() { echo "usage: $0 start|stop|env|remove DIR" >&2; exit 2; }
[ $# -eq 2 ] || usage
cmd=$1
dir=$2
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
data="$dir/data"

bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
if [ -z "$bindir" ] || [ ! -x "$bindir/initdb" ]; then
    echo "no PostgreSQL server binaries under /usr/lib/postgresql/*/bin (run scripts/install-deps.sh)" >&2
    exit 1
fi

# Runs a command as the cluster's owner.
as_owner() {
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

# A port nothing listens on now (checked with a connect attempt via bash's /dev/tcp).
free_port() {
    local port
    for _ in $(seq 1 50); do
        port=$(( 20000 + RANDOM % 20000 ))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            echo "$port"
            return 0
        fi
    done
    echo "no free port found" >&2
    return 1
}

url() { echo "postgres://postgres@127.0.0.1:$(cat "$dir/port")/keyvault_test"; }

running() { [ -d "$data" ] && as_owner "$bindir/pg_ctl" -D "$data" status >/dev/null 2>&1; }

start() {
    if [ "$(id -u)" -eq 0 ]; then
        chown postgres: "$dir"
        chmod 0700 "$dir"
        # The owner must be able to reach DIR through its parents (e.g. a mktemp dir under /tmp is fine).
    fi
    local fresh=0
    if [ ! -f "$data/PG_VERSION" ]; then
        fresh=1
        free_port > "$dir/port"
        as_owner "$bindir/initdb" -D "$data" -U postgres --auth=trust --no-sync -E UTF8 >"$dir/initdb.log" 2>&1 \
            || { cat "$dir/initdb.log" >&2; exit 1; }
        # TLS on, as a production server (and Citus) has it: clients connect with sslmode=prefer and so
        # speak TLS to 127.0.0.1, as a relay pointed at a server by its address does. A self-signed
        # certificate: prefer and require do not check it.
        as_owner openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=keyvault-test-postgres \
            -keyout "$data/server.key" -out "$data/server.crt" >"$dir/openssl.log" 2>&1 \
            || { cat "$dir/openssl.log" >&2; exit 1; }
        chmod 0600 "$data/server.key"
        cat >> "$data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $(cat "$dir/port")
unix_socket_directories = '$dir'
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 200
ssl = on
CONF
    fi
    if ! running; then
        as_owner "$bindir/pg_ctl" -D "$data" -l "$dir/server.log" -w -t 30 start >/dev/null \
            || { tail -n 20 "$dir/server.log" >&2; exit 1; }
    fi
    if [ $fresh -eq 1 ]; then
        as_owner "$bindir/psql" -h "$dir" -p "$(cat "$dir/port")" -U postgres -d postgres -qAt \
            -c "CREATE DATABASE keyvault_test" >/dev/null
    fi
    url > "$dir/url"
    chmod 0644 "$dir/url" 2>/dev/null || true
    url
}

stop() {
    if running; then
        as_owner "$bindir/pg_ctl" -D "$data" -m fast -w -t 30 stop >/dev/null
    fi
}

case "$cmd" in
    start) start ;;
    stop) stop ;;
    env)
        [ -f "$dir/port" ] || { echo "no cluster in $dir (run start first)" >&2; exit 1; }
        echo "KEYVAULT_TEST_POSTGRES=$(url)"
        echo "KEYVAULT_TEST_PG_DIR=$dir"
        ;;
    remove)
        stop
        rm -rf "$dir"
        ;;
    *) usage ;;
esac
