# Braid's entry points. Each target installs what it needs (scripts/setup.sh
# is idempotent), so `make demo` and `make test` work on a fresh machine.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
export PATH := $(HOME)/.cargo/bin:$(CURDIR)/js/node_modules/.bin:$(PATH)

BRAID := target/debug/braid
NPM_OPS := target/npm
WF_OUT := target/wf
# One cargo target directory for every generated crate (warm builds).
export BRAID_TARGET_DIR := $(CURDIR)/target/braid
# The operation registry of this checkout's demo and tests (not the user's).
export BRAID_HOME := $(CURDIR)/target/braid-home
WORKFLOWS := $(filter-out workflows/vectors.json,$(wildcard workflows/*.json))
SAMPLE := workflows/samples/sample.txt

.PHONY: setup setup-demo setup-bench demo test test-docs bench bench-first bench-glue bench-run test-rust test-lint test-nostd test-wasm test-workflows test-builds test-node test-postgres test-s3 test-cluster bench-cluster bless clean

# What each entry point installs (scripts/setup.sh): the demo only what it
# runs; the tests the rest (browser, sandbox, PostgreSQL, Garage, the
# wasmtime CLI, mdBook).
setup-demo:
	@scripts/setup.sh demo
setup:
	@scripts/setup.sh test
setup-bench:
	@scripts/setup.sh bench

$(BRAID): setup-demo FORCE
	@cargo build -p braid-cli

FORCE:

## demo: the main job: a manifest becomes a crate and an npm package; both run
demo: $(BRAID)
	@echo "== operations in the registry"
	@$(BRAID) ops
	@echo
	@echo "== validate and build workflows/cidv1_from_bytes.json for native and Node"
	@$(BRAID) validate workflows/cidv1_from_bytes.json
	@$(BRAID) build workflows/cidv1_from_bytes.json --targets native,node -o target/demo
	@echo
	@echo "== CIDv1 (blake3, raw, base32) of $(SAMPLE)"
	@printf 'native (braid run):                '
	@$(BRAID) run workflows/cidv1_from_bytes.json --input $(SAMPLE) --time
	@node js/scripts/demo.mjs target/demo/pkg/node/wf_cidv1_from_bytes.js $(SAMPLE)

## test: every test (Rust, lint, no_std builds, Wasm builds, Node)
test: setup test-docs test-lint test-rust test-nostd test-builds test-node test-postgres test-s3 test-cluster
	@echo "make test: all passed"

# The book under docs/ builds, and every relative link in it and in the
# README leads to a file, and an anchor to a heading (js/scripts/check-docs.mjs);
# the page of component hosts runs as written (js/test-docs/).
test-docs: setup $(BRAID)
	mdbook build docs
	node js/scripts/check-docs.mjs
	$(call NODE_TEST,BRAID_BIN=$(CURDIR)/$(BRAID),test-docs/)

# Also lints the code #[operation] generates for the `wasm` feature, on
# wasm32, and checks the module structure (xtask/): no two modules of a
# crate import each other, no file of the compiler library or the service
# over 600 lines. The editor's committed assets are what js/editor/ builds.
# ESLint checks Braid's own JavaScript (eslint.config.mjs says which).
test-lint: setup
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets --quiet -- -D warnings
	js/node_modules/.bin/eslint --max-warnings 0
	cargo xtask modules
	cargo xtask lint-wasm
	cargo xtask package --install
	node js/scripts/build-editor.mjs --check

test-rust: setup
	cargo test --workspace
	# The component boundary's conversions and packed encoding (a
	# workflow's component turns the feature on).
	cargo test --quiet -p braid-support --features component --lib component
	# The HTTP function's contract on plain values (multipart, problems,
	# the input limit a build compiles in): a workflow's `http` feature.
	cargo test --quiet -p braid-support --features http --lib http
	# Operations built with one config value compiled in, as a workflow that
	# names only that value builds them: the others fail with NotCompiledIn.
	cargo test --quiet -p op_multihash --no-default-features --features std,hasher-blake3
	cargo test --quiet -p op_cid --no-default-features --features std,base-base32

# Every operation whose manifest says `nostd`, built for a bare-metal target
# with default features off (but every config-value feature on, so all of
# its code is compiled): a crate that pulls in std fails with E0463
# (xtask/src/tasks.rs).
test-nostd: setup
	cargo xtask nostd

# Every Wasm-capable operation, alone, as a Node package.
OP_PACKAGES = $(BRAID) op-package $$($(BRAID) ops --supports wasm --names) --targets node,web,bundler -o $(NPM_OPS)
test-wasm: setup $(BRAID)
	$(OP_PACKAGES)

# Every example workflow (and two test ones: hostile strings, and an Array
# as the external input for js/test/hostile.test.mjs) built for every target
# its operations allow, warnings denied, into $(WF_OUT); then what users of
# the output rely on (standalone crate, a Rust consumer, operations reused,
# reproducible .wasm): named trials in generator/cli/tests/e2e.rs. Then every
# manifest at the limits builds (generator/cli/tests/limits.rs).
# `--workspace`, not `-p braid-cli`: the same features as test-rust's build,
# so the test binaries are the ones it made (with `-p`, cargo resolves the
# features of braid-cli alone and compiles them again).
E2E = cargo test --quiet --workspace --test e2e -- --ignored
LIMITS = cargo test --quiet --workspace --test limits -- --ignored
test-workflows: setup $(BRAID)
	$(E2E)
	$(LIMITS)

# test-wasm and test-workflows at the same time (scripts/together.sh), the
# operations' packages and the manifests at the limits each in a cargo
# target directory of its own: on 2 cores, vmstat found the machine idle a
# quarter of the time they ran one after the other (each compiles one crate
# at once, on one core, then runs wasm-bindgen or wasm-opt on one core),
# and in one directory cargo's lock would make them take turns.
test-builds: setup $(BRAID)
	scripts/together.sh '$(E2E)' 'BRAID_TARGET_DIR=$(CURDIR)/target/braid-ops $(OP_PACKAGES)' \
	  'BRAID_TARGET_DIR=$(CURDIR)/target/braid-limits $(LIMITS)'

# The Node tests make temporary directories (services' data, npm consumers,
# cargo target directories): all under one TMPDIR, removed afterwards
# whatever the result. World-writable and sticky like /tmp, as the test
# service run by an ordinary user writes there too. Test files run at
# least two at a time: node's default, one fewer than the cores, is one on
# two cores, and the files spend much of their time waiting on processes
# (builds, browsers, servers); on 2 cores, from a fresh clone, test-node
# took 9 min 23 s, not 14 min 34 s. Each test waits for what it can observe, so none depends on running
# alone (services on ports of their own, data in directories of their own).
NODE_TEST_CONCURRENCY ?= $(shell n=$$(nproc); echo $$(( n > 2 ? n - 1 : 2 )))
NODE_TEST = tmp=$$(mktemp -d) && chmod 1777 $$tmp && status=0 && \
	(cd js && TMPDIR=$$tmp $(1) node --test --test-concurrency=$(NODE_TEST_CONCURRENCY) $(2)) || status=$$?; \
	rm -rf $$tmp || true; exit $$status

test-node: test-builds
	$(call NODE_TEST,BRAID_OP_PKGS=$(CURDIR)/$(NPM_OPS) BRAID_WF_OUT=$(CURDIR)/$(WF_OUT) BRAID_BIN=$(CURDIR)/$(BRAID),test/)

# Private servers for the shared backends' tests, on loopback, each in a
# fresh temporary directory, stopped and removed afterwards whatever the
# result (xtask/src/tasks.rs): PostgreSQL (scripts/postgres.sh) for the
# store tests of the shared backend; a three-node Garage (scripts/garage.sh)
# for the S3 artifact store's and the compile cache's.
test-postgres: setup
	cargo xtask test-postgres

test-s3: setup
	cargo xtask test-s3

# A deployment on one machine: PostgreSQL, a three-node Garage, two `braid
# serve` (API only) and three workers; submissions, a worker, a Garage node
# and an API killed mid-way, restarts, a damaged object (js/test-cluster/).
test-cluster: setup $(BRAID)
	$(call NODE_TEST,BRAID_BIN=$(CURDIR)/$(BRAID),test-cluster/)

## bench: numbers, not tests: bench/results.json and bench/REPORT.md, then
## those of bench-cluster, bench-run, bench-first and bench-glue
bench: setup-bench test-wasm
	BRAID_DENY_WARNINGS=1 $(BRAID) build workflows/cidv1_from_bytes.json -o $(WF_OUT)/cidv1_from_bytes
	BRAID_DENY_WARNINGS=1 $(BRAID) build bench/workflows/cid_of_text.json --targets node -o target/bench/cid_of_text
	BRAID_DENY_WARNINGS=1 $(BRAID) build workflows/photo_proof.json --targets native,node,web -o $(WF_OUT)/photo_proof
	@# The floor is compiled as Braid compiles its packages: with Wasm SIMD.
	RUSTFLAGS=-Ctarget-feature=+simd128 wasm-pack --quiet build --release --target nodejs bench/baselines --out-dir ../../target/bench/baselines
	RUSTFLAGS=-Ctarget-feature=+simd128 wasm-pack --quiet build --release --target web bench/baselines --out-dir ../../target/bench/baselines-web
	cp $(WF_OUT)/cidv1_from_bytes/crate/Cargo.lock bench/native/Cargo.lock
	@# Five criterion runs, the order of the two functions swapped every other
	@# run: the ratio is taken per run, then the median over runs (one run
	@# measures the two functions seconds apart, and this machine drifts).
	rm -rf target/bench/criterion
	for run in 1 2 3 4 5; do \
	  BRAID_BENCH_SWAP=$$((run % 2 == 0)) CRITERION_HOME=$(CURDIR)/target/bench/criterion/run$$run cargo bench --quiet --manifest-path bench/native/Cargo.toml \
	    --target-dir $(BRAID_TARGET_DIR) --bench cid -- --warm-up-time 1 --measurement-time 2 >/dev/null || exit 1; \
	done
	@# The same pair interleaved in 200 short rounds (the ratio the target uses).
	cargo bench --quiet --manifest-path bench/native/Cargo.toml --target-dir $(BRAID_TARGET_DIR) --bench paired \
	  > target/bench/native-paired.json
	@# photo_proof natively: the generated crate against chains written by
	@# hand on the very operation crates it vendors (bench/photo/manifest.sh).
	cd js && node --input-type=module -e "const m = await import('./bench/images.mjs'); Object.keys(m.SIZES).forEach(m.photo)"
	mkdir -p target/bench/photo
	bench/photo/manifest.sh $(WF_OUT)/photo_proof/crate bench/photo > target/bench/photo/Cargo.toml
	cp $(WF_OUT)/photo_proof/crate/Cargo.lock target/bench/photo/Cargo.lock
	cargo run --quiet --release --manifest-path target/bench/photo/Cargo.toml --target-dir $(BRAID_TARGET_DIR) -- target/bench/images \
	  > target/bench/native-photo.json
	cd js && BRAID_OP_PKGS=$(CURDIR)/$(NPM_OPS) BRAID_WF_OUT=$(CURDIR)/$(WF_OUT) BRAID_BIN=$(CURDIR)/$(BRAID) node bench/main.mjs
	$(MAKE) bench-cluster
	$(MAKE) bench-run
	$(MAKE) bench-first
	$(MAKE) bench-glue

## bench-glue: the Node package's entry points against those of the package
## the braid of GLUE_BASE builds, side by side in one process (bench/glue.json,
## bench/GLUE.md). GLUE_BASE defaults to the last revision before the
## package's JavaScript became Braid's own (issue 54); the braid of that tree
## is built apart (its own target directory, registry and crates), once.
GLUE_BASE ?= fcbebca
GLUE_DIR := target/bench/glue
bench-glue: setup-bench $(BRAID)
	@git cat-file -e '$(GLUE_BASE)^{commit}' 2>/dev/null || { echo "bench-glue: GLUE_BASE=$(GLUE_BASE) is not a commit of this clone (a shallow clone? git fetch --unshallow)"; exit 1; }
	@if [ "$$(cat $(GLUE_DIR)/base.rev 2>/dev/null)" != "$$(git rev-parse '$(GLUE_BASE)^{commit}')" ]; then \
	  rm -rf $(GLUE_DIR)/base && mkdir -p $(GLUE_DIR)/base && \
	  git archive '$(GLUE_BASE)' | tar -x -C $(GLUE_DIR)/base && \
	  git rev-parse '$(GLUE_BASE)^{commit}' > $(GLUE_DIR)/base.rev; \
	fi
	cargo build --quiet -p braid-cli --manifest-path $(GLUE_DIR)/base/Cargo.toml --target-dir $(GLUE_DIR)/target
	BRAID_HOME=$(CURDIR)/$(GLUE_DIR)/home BRAID_TARGET_DIR=$(CURDIR)/$(GLUE_DIR)/braid BRAID_DENY_WARNINGS=1 \
	  $(GLUE_DIR)/target/debug/braid build workflows/cidv1_from_bytes.json --targets node -o $(GLUE_DIR)/before
	BRAID_DENY_WARNINGS=1 $(BRAID) build workflows/cidv1_from_bytes.json --targets node -o $(GLUE_DIR)/after
	node js/bench/compare-packages.mjs $(GLUE_DIR)/before $(GLUE_DIR)/after --runs 10 --report $(GLUE_BASE)

## bench-first: a newcomer's first-time paths, cold (bench/first-time.json,
## bench/FIRST.md): braid ops add of a scaffolded operation, the service's
## first build of a workflow.
bench-first: setup $(BRAID)
	cd js && BRAID_BIN=$(CURDIR)/$(BRAID) node bench/first-time.mjs

## bench-cluster: a deployment's numbers (bench/cluster.json, bench/CLUSTER.md):
## builds/min with 1-3 workers, a fresh worker's first build with the compile
## cache cold and warm, cached-publish latency on PostgreSQL and SQLite.
bench-cluster: setup $(BRAID)
	cd js && BRAID_BIN=$(CURDIR)/$(BRAID) node bench/cluster.mjs

## bench-run: the run endpoint against a node:http server, the native
## floor and `wasmtime serve` on hand-written wasi:http components
## (bench/run.json, bench/RUN.md): req/s, latency at half load, CPU and
## page faults a request, cores used, instantiation, RSS, first runs. oha
## is installed into target/tools, the wasmtime CLI (a release binary of
## the engine's LTS line) with the tests' tools (scripts/setup.sh).
OHA := target/tools/bin/oha
bench-run: setup $(BRAID)
	@test -x $(OHA) || cargo install --quiet --locked oha --version '~1.16' --root target/tools
	@rustup target list --installed | grep -qx wasm32-wasip2 || rustup target add wasm32-wasip2
	for handler in cid photo; do \
	  RUSTFLAGS=-Ctarget-feature=+simd128 cargo build --quiet --release --target wasm32-wasip2 \
	    --manifest-path bench/wasi-http-$$handler/Cargo.toml --target-dir target/bench/wasi-http-$$handler || exit 1; \
	done
	cargo build --quiet --profile perf -p braid-cli -p braid-engine --bins --example runs
	for wf in cidv1_from_bytes photo_proof; do \
	  BRAID_DENY_WARNINGS=1 $(BRAID) build workflows/$$wf.json --targets native,node -o $(WF_OUT)/$$wf && \
	  mkdir -p target/bench/floor-$$wf && \
	  bench/floor/manifest.sh $(WF_OUT)/$$wf/crate $$wf bench/floor > target/bench/floor-$$wf/Cargo.toml && \
	  cp $(WF_OUT)/$$wf/crate/Cargo.lock target/bench/floor-$$wf/Cargo.lock && \
	  cargo build --quiet --release --manifest-path target/bench/floor-$$wf/Cargo.toml --target-dir target/bench/floor || exit 1; \
	done
	cd js && BRAID_WF_OUT=$(CURDIR)/$(WF_OUT) BRAID_PERF_BIN=$(CURDIR)/target/perf/braid node bench/run.mjs

## bless: rewrite committed manifests and trybuild expectations; review the diff
bless:
	BRAID_BLESS=1 cargo test -p braid --test operation_manifests
	INSTA_UPDATE=always cargo test -p braid --test golden
	TRYBUILD=overwrite cargo test -p braid-macros --test ui
	@# Writes the snapshot of a new SCHEMA_VERSION; never rewrites an old one.
	BRAID_BLESS=1 cargo test -p braid-schema --test schema_version
	node js/scripts/make-vectors.mjs
	node js/scripts/make-images.mjs

clean:
	cargo clean
	rm -rf js/node_modules
