#!/usr/bin/env bash
# A private Garage cluster (an S3-compatible store) for tests and local
# deployments: three nodes on loopback, replication 3, one bucket `braid`.
#   scripts/garage.sh start DIR PORT   creates the cluster in DIR if needed, starts
#                                      every node that is not running, waits until
#                                      each serves S3, prints the --store URL
#   scripts/garage.sh env DIR          prints the bucket's credentials as
#                                      AWS_ACCESS_KEY_ID=... lines (for `export`)
#   scripts/garage.sh stop DIR         stops every node (SIGTERM)
#   scripts/garage.sh kill DIR N       kills node N (1-3) like a crash (SIGKILL)
# Node N serves S3 on PORT+10(N-1), RPC on the port after; choose PORT below
# the ephemeral range (32768 and up here), where outgoing connections may hold
# it. DIR keeps the PORT it was created with. Restarted nodes rejoin through
# `bootstrap_peers`. A node that cannot start shows the end of its log.
# Garage is installed by scripts/setup.sh.
set -euo pipefail

garage=${GARAGE:-$(command -v garage || echo "$HOME/.cargo/bin/garage")}
[ -x "$garage" ] || { echo "garage.sh: Garage is not installed (scripts/setup.sh installs it)" >&2; exit 1; }

cmd=${1:?usage: garage.sh start DIR PORT | env DIR | stop DIR | kill DIR N}
dir=${2:?the cluster directory}
mkdir -p "$dir"
dir=$(realpath "$dir")
nodes=(1 2 3)
conf() { echo "$dir/node$1/garage.toml"; }
pid_of() { cat "$dir/node$1/pid" 2>/dev/null || true; }
# Running: the recorded pid is alive and is this node's garage (not a pid reused since).
running() {
  local p; p=$(pid_of "$1")
  [ -n "$p" ] && kill -0 "$p" 2>/dev/null && tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -qF "$(conf "$1")"
}
hex() { head -c "$1" /dev/urandom | od -An -tx1 | tr -d ' \n'; }
cli() { local n=$1; shift; "$garage" -c "$(conf "$n")" "$@"; }

# Node N's configuration; PEERS: the `bootstrap_peers` entries.
write_conf() { # N PEERS
  local n=$1 s3=$((port + 10 * ($1 - 1)))
  mkdir -p "$dir/node$n"
  cat >"$(conf "$n").tmp" <<EOF
metadata_dir = "$dir/node$n/meta"
data_dir = "$dir/node$n/data"
db_engine = "sqlite"
replication_factor = 3
consistency_mode = "consistent"
rpc_bind_addr = "127.0.0.1:$((s3 + 1))"
rpc_public_addr = "127.0.0.1:$((s3 + 1))"
rpc_secret = "$rpc_secret"
bootstrap_peers = [$2]

[s3_api]
s3_region = "garage"
api_bind_addr = "127.0.0.1:$s3"
root_domain = ".s3.garage.localhost"
EOF
  chmod 600 "$(conf "$n").tmp"
  mv "$(conf "$n").tmp" "$(conf "$n")"
}

die() { echo "garage.sh: $1" >&2; exit 1; }
# Gives up with the end of every node's log, so that a failure says why.
fail() {
  echo "garage.sh: $1" >&2
  for n in "${nodes[@]}"; do
    [ -f "$dir/node$n/garage.log" ] || continue
    echo "--- the end of $dir/node$n/garage.log:" >&2
    tail -n 15 "$dir/node$n/garage.log" >&2
  done
  exit 1
}

# Polls the condition (a node that exits fails at once); the deadline is
# generous, for a machine busy with other work.
wait_for() { # what, command...
  local what=$1; shift
  for _ in $(seq 1 1500); do
    "$@" >/dev/null 2>&1 && return 0
    for n in "${nodes[@]}"; do running "$n" || fail "node $n exited while waiting for $what"; done
    sleep 0.2
  done
  fail "$what did not come up within five minutes"
}

# A port that something else holds makes a node exit at once: say which.
port_free() {
  python3 -c 'import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))' "$1" 2>/dev/null
}

case "$cmd" in
  start)
    port=${3:?the S3 port of the first node}
    if [ ! -f "$dir/cluster.env" ]; then
      umask 077
      { echo "rpc_secret=$(hex 32)"; echo "key_id=GK$(hex 12)"; echo "secret=$(hex 32)"; echo "port=$port"; } >"$dir/cluster.env.tmp"
      mv "$dir/cluster.env.tmp" "$dir/cluster.env"
    fi
    asked=$port
    # shellcheck disable=SC1091
    . "$dir/cluster.env"
    [ "$port" = "$asked" ] || die "$dir holds a cluster on port $port, not $asked: use that port, or another DIR"
    for n in "${nodes[@]}"; do
      [ -f "$(conf "$n")" ] || write_conf "$n" ""
      if ! running "$n"; then
        for p in $((port + 10 * (n - 1))) $((port + 10 * (n - 1) + 1)); do
          port_free "$p" || die "port $p on 127.0.0.1 is taken by another program: choose another PORT"
        done
        setsid "$garage" -c "$(conf "$n")" server >>"$dir/node$n/garage.log" 2>&1 </dev/null &
        echo $! >"$dir/node$n/pid"
      fi
    done
    for n in "${nodes[@]}"; do wait_for "node $n" cli "$n" node id -q; done
    # Each step is skipped if done: a start that failed half-way resumes.
    if [ ! -f "$dir/initialized" ]; then
      ids=()
      for n in "${nodes[@]}"; do ids+=("$(cli "$n" node id -q)"); done
      for n in 2 3; do cli 1 node connect "${ids[$((n - 1))]}" >/dev/null; done
      if ! cli 1 layout show | grep -q 'Current cluster layout version: [1-9]'; then
        for id in "${ids[@]}"; do cli 1 layout assign -z dc1 -c 1GB "${id%%@*}" >/dev/null; done
        cli 1 layout apply --version 1 >/dev/null
      fi
      cli 1 key list | grep -qF "$key_id" || cli 1 key import --yes -n braid "$key_id" "$secret" >/dev/null
      cli 1 bucket list | grep -qw braid || wait_for "the bucket" cli 1 bucket create braid
      cli 1 bucket allow --read --write --owner braid --key "$key_id" >/dev/null
      peers=$(printf '"%s", ' "${ids[@]}")
      for n in "${nodes[@]}"; do write_conf "$n" "${peers%, }"; done
      touch "$dir/initialized"
    fi
    # Every node serves S3 (an anonymous request answers 403) and sees the others.
    for n in "${nodes[@]}"; do
      wait_for "the S3 API of node $n" curl -s -o /dev/null "http://127.0.0.1:$((port + 10 * (n - 1)))/"
    done
    healthy() { cli 1 status 2>/dev/null | grep -q 'HEALTHY NODES' && [ "$(cli 1 status | grep -c '127.0.0.1:')" -ge 3 ] && ! cli 1 status | grep -q 'FAILED NODES'; }
    wait_for "the cluster" healthy
    endpoints=""
    for n in "${nodes[@]}"; do endpoints="$endpoints,http://127.0.0.1:$((port + 10 * (n - 1)))"; done
    echo "s3://braid?endpoint=${endpoints#,}&region=garage"
    ;;
  env)
    # shellcheck disable=SC1091
    . "$dir/cluster.env"
    echo "AWS_ACCESS_KEY_ID=$key_id"
    echo "AWS_SECRET_ACCESS_KEY=$secret"
    ;;
  stop)
    for n in "${nodes[@]}"; do
      if running "$n"; then kill "$(pid_of "$n")"; fi
    done
    for n in "${nodes[@]}"; do
      for _ in $(seq 1 100); do running "$n" || break; sleep 0.1; done
      if running "$n"; then
        echo "garage.sh: node $n did not stop within 10 s: killed" >&2
        kill -9 "$(pid_of "$n")"
      fi
    done
    ;;
  kill)
    n=${3:?the node (1-3)}
    if running "$n"; then kill -9 "$(pid_of "$n")"; fi
    for _ in $(seq 1 100); do running "$n" || break; sleep 0.1; done
    ;;
  *) echo "garage.sh: unknown command $cmd" >&2; exit 2 ;;
esac
