#!/usr/bin/env bash
# Installs the toolchain Braid needs, idempotently: rustup targets,
# wasm-bindgen-cli and wasm-pack at pinned versions, and the npm dev
# dependencies of js/ (binaryen 132 provides wasm-opt; Debian's is broken).
# Safe to run again: every step checks what is present first.
set -euo pipefail
cd "$(dirname "$0")/.."

WASM_BINDGEN_VERSION=0.2.130
WASM_PACK_VERSION=0.15.1

log() { printf 'setup: %s\n' "$*" >&2; }

# --- Rust targets ---------------------------------------------------------
installed_targets=$(rustup target list --installed)
for t in wasm32-unknown-unknown thumbv7em-none-eabihf; do
  if ! grep -qx "$t" <<<"$installed_targets"; then
    log "rustup target add $t"
    rustup target add "$t"
  fi
done

# --- cargo-installed tools, at exact versions -----------------------------
have_version() { # cmd expected-version
  command -v "$1" >/dev/null 2>&1 && "$1" --version 2>/dev/null | grep -qF "$2"
}
if ! have_version wasm-bindgen "$WASM_BINDGEN_VERSION"; then
  log "cargo install wasm-bindgen-cli $WASM_BINDGEN_VERSION"
  cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --locked --force
fi
if ! have_version wasm-pack "$WASM_PACK_VERSION"; then
  log "cargo install wasm-pack $WASM_PACK_VERSION"
  cargo install wasm-pack --version "$WASM_PACK_VERSION" --locked --force
fi

# --- npm dev dependencies (binaryen's wasm-opt, test oracles) -------------
if [ ! -x js/node_modules/.bin/wasm-opt ] || [ js/package-lock.json -nt js/node_modules/.package-lock.json ]; then
  log "npm ci in js/"
  (cd js && npm ci --no-audit --no-fund)
fi
log "ok"
