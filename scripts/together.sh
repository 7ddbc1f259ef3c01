#!/usr/bin/env bash
# Runs its arguments, each a shell command, at the same time: the first
# with its output as it comes, each of the others with its output in a log
# (target/tmp/together/N.log) shown once it has ended. Exits 1 if any
# failed, naming which. `make test-builds` runs the e2e trials, the
# operations' npm packages and the manifests at the limits this way: each
# leaves a core idle for much of its time (one crate compiled at once, on
# one core; wasm-bindgen, wasm-opt), and in cargo target directories of
# their own they need not take turns on cargo's lock.
set -uo pipefail

commands=("$@")
logs=target/tmp/together
mkdir -p "$logs"
pids=()
for ((i = 1; i < ${#commands[@]}; i++)); do
  echo "together: [$i] ${commands[i]} (output in $logs/$i.log, shown when it ends)"
  bash -c "${commands[i]}" > "$logs/$i.log" 2>&1 &
  pids[i]=$!
done

failed=()
bash -c "${commands[0]}" || failed+=("${commands[0]}")
for ((i = 1; i < ${#commands[@]}; i++)); do
  wait "${pids[i]}" || failed+=("${commands[i]}")
  echo "together: [$i] ${commands[i]}:"
  cat "$logs/$i.log"
done

for command in "${failed[@]}"; do
  echo "together: failed: $command" >&2
done
[ ${#failed[@]} -eq 0 ]
