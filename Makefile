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
WORKFLOWS := $(filter-out workflows/vectors.json,$(wildcard workflows/*.json))
SAMPLE := workflows/samples/sample.txt
THUMB := thumbv7em-none-eabihf

.PHONY: setup demo test bench test-rust test-lint test-nostd test-wasm test-workflows test-node bless clean

setup:
	@scripts/setup.sh

$(BRAID): setup FORCE
	@cargo build --quiet -p braid-cli

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
test: setup test-lint test-rust test-nostd test-wasm test-workflows test-node
	@echo "make test: all passed"

# Also lints the code #[operation] generates for the `wasm` feature, on wasm32.
test-lint: $(BRAID)
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets --quiet -- -D warnings
	ops=$$($(BRAID) ops --supports wasm --names); \
	cargo clippy --quiet --target wasm32-unknown-unknown $$(printf -- '-p %s ' $$ops) \
	  --features "$$(printf '%s/wasm,' $$ops)" -- -D warnings

test-rust: setup
	cargo test --workspace
	# Operations built with one config value compiled in, as a workflow that
	# names only that value builds them: the others fail with NotCompiledIn.
	cargo test --quiet -p op_multihash --no-default-features --features std,hasher-blake3
	cargo test --quiet -p op_cid --no-default-features --features std,base-base32

# Every operation whose manifest says `nostd`, built for a bare-metal target
# with default features off (but every config-value feature on, so all of
# its code is compiled): a crate that pulls in std fails with E0463.
test-nostd: $(BRAID)
	cargo build --quiet -p braid-support --no-default-features --target $(THUMB)
	@for op in $$($(BRAID) ops --supports nostd --names); do \
	  echo "no_std: $$op ($(THUMB))"; \
	  values=$$(node -p 'require("./operations/'$$op'/manifest.json").features.filter(f => f !== "std" && f !== "wasm").join(",")'); \
	  RUSTFLAGS="-D warnings" cargo build --quiet -p $$op --no-default-features --features "$$values" --target $(THUMB) --target-dir target/nostd; \
	done

# Every Wasm-capable operation, alone, as a Node package.
test-wasm: $(BRAID)
	$(BRAID) op-package $$($(BRAID) ops --supports wasm --names) --targets node,web,bundler -o $(NPM_OPS)

# Every example workflow (and two test ones: hostile strings, and an Array
# as the external input for js/test/hostile.test.mjs) generated and built for
# every target its operations allow, warnings denied; the crate builds away
# from the repository; a second build elsewhere gives the same .wasm.
test-workflows: $(BRAID)
	@for w in $(WORKFLOWS) generator/braid/tests/data/nasty.json generator/braid/tests/data/concat_hex.json; do \
	  n=$$(basename $$w .json); echo "braid build $$w"; \
	  BRAID_DENY_WARNINGS=1 $(BRAID) build $$w -o $(WF_OUT)/$$n; \
	done
	@dir=$$(mktemp -d) && cp -r $(WF_OUT)/dual_cid_of_text/crate $$dir/ && \
	  if grep -rl "$(CURDIR)" $$dir/crate; then echo "absolute path in the generated crate"; exit 1; fi && \
	  (cd $$dir/crate && cargo build --quiet --offline --target-dir $(BRAID_TARGET_DIR)) && \
	  echo "standalone crate builds in $$dir" && rm -rf $$dir
	@# Every manifest that validates builds: manifests at each limit and
	@# near them, for every target, no compiler process over 2 GiB.
	cargo test --quiet -p braid-cli --test limits -- --ignored
	@# A Rust user of a generated crate; its lock starts from the crate's.
	cp $(WF_OUT)/salted_cid/crate/Cargo.lock generator/braid/tests/consumer/Cargo.lock
	cargo test --quiet --manifest-path generator/braid/tests/consumer/Cargo.toml --target-dir $(BRAID_TARGET_DIR)
	@# A new workflow over operations already built compiles only itself: the
	@# operations' Wasm rlibs are not rewritten.
	@sed 's/"cidv1_from_bytes"/"reuse_check"/' workflows/cidv1_from_bytes.json > target/reuse_check.json
	@rlibs() { ls -l --time-style=full-iso $(BRAID_TARGET_DIR)/wasm32-unknown-unknown/release/deps/libop_multihash-*.rlib \
	    $(BRAID_TARGET_DIR)/wasm32-unknown-unknown/release/deps/libbraid_support-*.rlib; }; \
	  before=$$(rlibs) && \
	  BRAID_DENY_WARNINGS=1 $(BRAID) build target/reuse_check.json --targets node -o target/wf-reuse >/dev/null 2>&1 && \
	  [ "$$before" = "$$(rlibs)" ] || { echo "a new workflow recompiled its operations"; exit 1; }
	@echo "a new workflow reuses the operations already built"
	@# Another output and another cargo target (so another staging) directory.
	@BRAID_DENY_WARNINGS=1 BRAID_TARGET_DIR=$(CURDIR)/target/braid-again $(BRAID) build workflows/cidv1_from_bytes.json --targets node -o target/wf-again >/dev/null 2>&1
	cmp $(WF_OUT)/cidv1_from_bytes/pkg/node/wf_cidv1_from_bytes_bg.wasm target/wf-again/pkg/node/wf_cidv1_from_bytes_bg.wasm
	@if grep -q "$(CURDIR)" target/wf-again/pkg/node/wf_cidv1_from_bytes_bg.wasm; then echo "absolute path in the .wasm"; exit 1; fi
	@echo "reproducible: same .wasm from a second build elsewhere, no absolute paths"

test-node: test-wasm test-workflows
	cd js && BRAID_OP_PKGS=$(CURDIR)/$(NPM_OPS) BRAID_WF_OUT=$(CURDIR)/$(WF_OUT) BRAID_BIN=$(CURDIR)/$(BRAID) node --test test/

## bench: numbers, not tests: bench/results.json and bench/REPORT.md
bench: test-wasm
	BRAID_DENY_WARNINGS=1 $(BRAID) build workflows/cidv1_from_bytes.json -o $(WF_OUT)/cidv1_from_bytes
	BRAID_DENY_WARNINGS=1 $(BRAID) build bench/workflows/cid_of_text.json --targets node -o target/bench/cid_of_text
	wasm-pack --quiet build --release --target nodejs bench/baselines --out-dir ../../target/bench/baselines
	wasm-pack --quiet build --release --target web bench/baselines --out-dir ../../target/bench/baselines-web
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
	cd js && BRAID_OP_PKGS=$(CURDIR)/$(NPM_OPS) BRAID_WF_OUT=$(CURDIR)/$(WF_OUT) BRAID_BIN=$(CURDIR)/$(BRAID) node bench/main.mjs

## bless: rewrite committed manifests and trybuild expectations; review the diff
bless:
	BRAID_BLESS=1 cargo test -p braid --test operation_manifests --test golden
	TRYBUILD=overwrite cargo test -p braid-macros --test ui
	node js/scripts/make-vectors.mjs

clean:
	cargo clean
	rm -rf js/node_modules
