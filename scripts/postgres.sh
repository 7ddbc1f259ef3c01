#!/usr/bin/env bash
# A private PostgreSQL cluster for tests and local deployments, on loopback:
#   scripts/postgres.sh start DIR PORT [DB]  creates the cluster in DIR if needed
#                                        (initdb), starts it, creates the database
#                                        DB (default braid), prints its URL
#   scripts/postgres.sh stop DIR         stops it (fast shutdown)
#   scripts/postgres.sh kill DIR         stops it like a crash (immediate)
# initdb refuses to run as root: as root, the cluster belongs to the
# `postgres` user (Debian's package creates it). Trust authentication on
# loopback only.
set -euo pipefail

# Debian links only some tools onto PATH: use the directory they live in.
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -n "$bin" ] || { command -v initdb >/dev/null 2>&1 && bin=$(dirname "$(readlink -f "$(command -v initdb)")"); } || true
if [ -z "$bin" ] || [ ! -x "$bin/pg_ctl" ]; then
  echo "postgres.sh: PostgreSQL is not installed (apt-get install postgresql; scripts/setup.sh does)" >&2
  exit 1
fi

as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

cmd=${1:?usage: postgres.sh start DIR PORT [DB] | stop DIR | kill DIR}
dir=${2:?the cluster directory}
dir=$(realpath -m "$dir") # the server runs elsewhere: its socket's directory must be absolute
case "$cmd" in
  start)
    port=${3:?the port}
    db=${4:-braid}
    [[ "$db" =~ ^[a-z_][a-z0-9_]*$ ]] || { echo "postgres.sh: a database name is lowercase letters, digits and _" >&2; exit 2; }
    mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chown postgres: "$dir"
    chmod 700 "$dir"
    if [ ! -f "$dir/PG_VERSION" ]; then
      as_owner "$bin/initdb" -D "$dir" -U braid --auth=trust --encoding=UTF8 --locale=C.UTF-8 >/dev/null
    fi
    as_owner "$bin/pg_ctl" -D "$dir" status >/dev/null 2>&1 ||
      as_owner "$bin/pg_ctl" -D "$dir" -l "$dir/server.log" -w -t 300 \
      -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories='$dir' -c fsync=on" start >/dev/null ||
      { echo "postgres.sh: the server did not start; the end of $dir/server.log:" >&2; tail -n 15 "$dir/server.log" >&2; exit 1; }
    as_owner "$bin/psql" -h 127.0.0.1 -p "$port" -U braid -d postgres -tAc \
      "SELECT 1 FROM pg_database WHERE datname = '$db'" | grep -q 1 ||
      as_owner "$bin/psql" -h 127.0.0.1 -p "$port" -U braid -d postgres -qc "CREATE DATABASE $db"
    echo "postgres://braid@127.0.0.1:$port/$db"
    ;;
  stop) as_owner "$bin/pg_ctl" -D "$dir" -m fast -w stop >/dev/null ;;
  kill) as_owner "$bin/pg_ctl" -D "$dir" -m immediate -w stop >/dev/null ;;
  *) echo "postgres.sh: unknown command $cmd" >&2; exit 2 ;;
esac
