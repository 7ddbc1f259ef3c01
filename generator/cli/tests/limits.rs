//! Every manifest that validates builds: manifests at each limit of
//! `braid::manifest` (and random valid ones near them) are generated and
//! built with `braid build` for every target their operations allow, and
//! no compiler process may exceed the memory budget (README, "Limits").
//!
//! Slow (it compiles), so it is `#[ignore]`d in `cargo test` and run by
//! `make test` as `cargo test --workspace --test limits -- --ignored`,
//! beside the e2e trials, in a cargo target directory of its own
//! (`make test-builds`; `BRAID_TARGET_DIR`), so that the two do not take
//! turns on cargo's lock.

use std::path::PathBuf;
use std::process::Command;

use braid::manifest::{self, validate};
use braid::Registry;
use serde_json::{json, Value};

/// The peak resident memory any compiler process may reach (2 GiB).
const RUSTC_BUDGET_BYTES: u64 = 2 << 30;

fn wf(name: &str, segments: Vec<Value>) -> String {
    json!({ "name": name, "version": "0.1.0", "segments": segments }).to_string()
}

fn op(name: &str) -> Value {
    json!({ "operation": name })
}

/// At each limit, valid.
fn at_the_limits() -> Vec<(String, String)> {
    let mut out = Vec::new();
    // Most operations: segments of MAX_OPERATIONS_PER_SEGMENT operations,
    // text and bytes alternating, each segment using the previous one.
    let per = manifest::MAX_OPERATIONS_PER_SEGMENT;
    let chain: Vec<Value> = (0..per).map(|i| op(if i % 2 == 0 { "op_utf8" } else { "op_encode" })).collect();
    let segments: Vec<Value> =
        (0..(manifest::MAX_OPERATIONS / per) as i64).map(|i| json!({ "inputs": [i - 1], "sequence": chain })).collect();
    out.push(("most_operations".to_string(), wf("most_operations", segments)));
    // Most segments, each one operation; the last collects nothing but the one before.
    let mut segments = vec![json!({ "inputs": [-1], "sequence": [op("op_utf8")] })];
    for i in 1..manifest::MAX_SEGMENTS as i64 {
        segments.push(json!({ "inputs": [i - 1], "sequence": [op(if i % 2 == 0 { "op_utf8" } else { "op_encode" })] }));
    }
    out.push(("most_segments".to_string(), wf("most_segments", segments)));
    // Most inputs of a segment, and most external inputs of the workflow.
    let mut inputs = vec![0i64];
    inputs.extend(std::iter::repeat_n(-1, manifest::MAX_EXTERNAL_INPUTS - 1));
    assert!(inputs.len() <= manifest::MAX_SEGMENT_INPUTS);
    let segments = vec![
        json!({ "inputs": [-1], "sequence": [op("op_utf8")] }),
        json!({ "inputs": inputs, "sequence": [op("op_collect"), op("op_concat"), op("op_multihash"), op("op_cid")] }),
    ];
    out.push(("most_inputs".to_string(), wf("most_inputs", segments)));
    // The deepest type: collect MAX_TYPE_NESTING times.
    let mut sequence = vec![op("op_utf8")];
    sequence.extend((0..manifest::MAX_TYPE_NESTING).map(|_| op("op_collect")));
    out.push(("deepest_type".to_string(), wf("deepest_type", vec![json!({ "inputs": [-1], "sequence": sequence })])));
    out
}

/// A small deterministic generator (xorshift), so the sample is the same
/// on every run and a failure can be reproduced.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// Random valid manifests near the limits: many segments, long chains,
/// wide collects, nesting; only the ones that validate are kept.
fn near_the_limits(count: usize) -> Vec<(String, String)> {
    let registry = Registry::builtin();
    let mut rng = Rng(0x5eed_b4a1d);
    let mut out = Vec::new();
    while out.len() < count {
        let segments = manifest::MAX_SEGMENTS - rng.below(8);
        let mut list = vec![json!({ "inputs": [-1], "sequence": [op("op_utf8")] })];
        let mut externals = 1;
        for i in 1..segments {
            // The previous segment, up to three earlier ones, maybe an
            // external input; every segment outputs Bytes.
            let mut inputs = vec![i as i64 - 1];
            inputs.extend((0..rng.below(4)).map(|_| (i - 1 - rng.below(i.min(4))) as i64));
            if externals < manifest::MAX_EXTERNAL_INPUTS && rng.below(3) == 0 {
                inputs.push(-1);
                externals += 1;
            }
            let mut sequence = vec![op("op_collect"), op("op_concat")];
            for _ in 0..rng.below(3) {
                sequence.extend([op("op_encode"), op("op_utf8")]);
            }
            list.push(json!({ "inputs": inputs, "sequence": sequence }));
        }
        let name = format!("near_limits_{}", out.len());
        let text = wf(&name, list);
        if validate(&text, &registry).is_ok() {
            out.push((name, text));
        }
    }
    out
}

/// Peak resident memory of the largest finished child process (and its
/// descendants), in bytes.
fn peak_child_rss() -> u64 {
    // SAFETY: getrusage writes into the struct we pass and nothing else.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage);
        usage
    };
    usage.ru_maxrss as u64 * 1024
}

#[test]
#[ignore = "compiles; run by make test"]
fn every_manifest_at_or_near_the_limits_builds_within_budget() {
    let registry = Registry::builtin();
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("limits");
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).unwrap();
    let mut samples = at_the_limits();
    samples.extend(near_the_limits(1));
    for (name, text) in &samples {
        let workflow = validate(text, &registry).unwrap_or_else(|d| panic!("{name} must be valid: {d:#?}"));
        let path = out.join(format!("{name}.json"));
        std::fs::write(&path, text).unwrap();
        let mut targets = vec!["native"];
        if workflow.supports(braid::schema::Platform::Nostd) {
            targets.push("nostd");
        }
        if workflow.supports(braid::schema::Platform::Wasm) {
            targets.push("node");
        }
        eprintln!("braid build {name} --targets {}", targets.join(","));
        let status = Command::new(env!("CARGO_BIN_EXE_braid"))
            .arg("build")
            .arg(&path)
            .arg("-o")
            .arg(out.join(name))
            .args(["--targets", &targets.join(",")])
            // The budget is the compilers'; wasm-opt (binaryen in Node)
            // spends minutes on these modules (about 3 on most_segments)
            // and would be a third of `make test`'s time limit.
            .arg("--no-opt")
            .env("BRAID_DENY_WARNINGS", "1")
            .env("BRAID_HOME", concat!(env!("CARGO_MANIFEST_DIR"), "/../../target/braid-home"))
            .status()
            .unwrap();
        assert!(status.success(), "{name} validates but does not build");
        let lib = std::fs::metadata(out.join(name).join("crate/src/lib.rs")).unwrap().len();
        eprintln!("  lib.rs {lib} bytes; peak compiler memory so far {} MiB", peak_child_rss() >> 20);
    }
    let peak = peak_child_rss();
    assert!(
        peak < RUSTC_BUDGET_BYTES,
        "a compiler process reached {} MiB (budget {} MiB)",
        peak >> 20,
        RUSTC_BUDGET_BYTES >> 20
    );
}
