//! End-to-end checks of `braid build`, one named trial each (libtest-mimic):
//! every example workflow built for every target its operations allow with
//! warnings denied (`build/<workflow>`, into `target/wf/`, where the Node
//! tests find them), then what a user of the output relies on: the crate
//! builds away from the repository, a Rust program can depend on it, a new
//! workflow reuses the operations already compiled, and a second build
//! elsewhere gives the same `.wasm` with no absolute path in it. Every
//! example with Node packages is also built as a component
//! (`component/<workflow>`, into `target/wf-component/`), and the executor
//! holds its budgets against an operation that misbehaves on demand.
//!
//! Slow (real cargo and wasm-bindgen builds), so ignored by a plain
//! `cargo test`; `make test` runs `cargo test --workspace --test e2e --
//! --ignored`. Trials run one at a time, builds first; a check run alone
//! (`-- --ignored consumer`) builds what it needs if it is missing.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

use libtest_mimic::{Arguments, Failed, Trial};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// Where `braid build` writes workflow outputs for the other tests.
fn wf_out() -> PathBuf {
    root().join("target/wf")
}

/// The cargo target directory shared by generated crates.
fn braid_target_dir() -> PathBuf {
    std::env::var_os("BRAID_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| root().join("target/braid"))
}

/// `cargo`, without the variables cargo set for this test (its package's
/// `CARGO_MANIFEST_DIR`, `CARGO_PKG_*`): build scripts that watch them, as
/// ring's does, would run again in the shared target directory, and the
/// next cargo of `make test` would rebuild what depends on them.
fn cargo() -> Command {
    let mut command = Command::new("cargo");
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        if [
            "CARGO_PKG_",
            "CARGO_MANIFEST_",
            "CARGO_CRATE_NAME",
            "CARGO_BIN_NAME",
            "CARGO_PRIMARY_PACKAGE",
            "CARGO_TARGET_TMPDIR",
        ]
        .iter()
        .any(|prefix| name.starts_with(prefix))
        {
            command.env_remove(name.as_ref());
        }
    }
    command
}

/// Runs `command`; its output becomes the failure message if it fails.
fn run(command: &mut Command) -> Result<(), Failed> {
    let out = command.output().map_err(|e| format!("cannot run {command:?}: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    Err(format!(
        "{command:?} failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
    .into())
}

/// The tests' registry home (`make test` exports the same), not the user's.
fn braid_home() -> PathBuf {
    std::env::var_os("BRAID_HOME").map(PathBuf::from).unwrap_or_else(|| root().join("target/braid-home"))
}

fn braid() -> Command {
    braid_with_home(&braid_home())
}

fn braid_with_home(home: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_braid"));
    command.env("BRAID_DENY_WARNINGS", "1").env("BRAID_TARGET_DIR", braid_target_dir()).env("BRAID_HOME", home);
    command
}

/// Runs `command` and returns its standard output.
fn stdout(command: &mut Command) -> Result<String, Failed> {
    let out = command.output().map_err(|e| format!("cannot run {command:?}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{command:?} failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Fails with `what` unless `found == expected`.
fn expect_eq(what: &str, found: &str, expected: &str) -> Result<(), Failed> {
    if found == expected {
        Ok(())
    } else {
        Err(format!("{what}: expected {expected:?}, found {found:?}").into())
    }
}

/// Replaces `from` (which must be there) with `to` in the file at `path`.
fn rewrite(path: &Path, from: &str, to: &str) -> Result<(), Failed> {
    let text = std::fs::read_to_string(path)?;
    if !text.contains(from) {
        return Err(format!("{} has no {from:?}", path.display()).into());
    }
    std::fs::write(path, text.replace(from, to))?;
    Ok(())
}

/// A workflow `name`: `op_utf8` then `step` (a sequence entry's JSON) on
/// the one external input.
fn text_workflow(dir: &Path, name: &str, step: &str) -> Result<PathBuf, Failed> {
    let path = dir.join(format!("{name}.json"));
    let text = format!(
        r#"{{ "name": "{name}", "version": "0.1.0", "description": "A test workflow", "groups": ["SYS"],
  "segments": [{{ "inputs": [-1], "sequence": [{{ "operation": "op_utf8", "version": "^0.1" }}, {step}] }}] }}"#
    );
    std::fs::write(&path, text)?;
    Ok(path)
}

/// An operation of one's own, end to end: `braid new op` scaffolds a crate
/// that passes its test; its body changed, `braid ops add` registers it;
/// a workflow using it builds for native, node and web and gives the new
/// body's output in each; a second version coexists, and requirements and
/// version ids pick each; the same sources again are a no-op, other code
/// under a registered version is refused; `braid build --operations`
/// pins the first version though the manifest asks for the newest.
fn an_operation_of_ones_own_is_scaffolded_added_and_used() -> Result<(), Failed> {
    let tmp = tempfile::tempdir()?;
    let home = tmp.path().join("home");
    let op = tmp.path().join("op_shout");
    run(braid_with_home(&home).args(["new", "op", "op_shout", "-o"]).arg(&op))?;
    let cargo_test = |dir: &Path| -> Result<(), Failed> {
        run(cargo().args(["test", "--quiet", "--target-dir"]).arg(braid_target_dir()).current_dir(dir))
    };
    cargo_test(&op)?;
    let lib = op.join("src/lib.rs");
    rewrite(&lib, "Ok(input.iter().rev().copied().collect())", "Ok(input.to_ascii_uppercase())")?;
    rewrite(&lib, "assert_eq!(out, *b\"cba\");", "assert_eq!(out, *b\"ABC\");")?;
    cargo_test(&op)?;
    let added = stdout(braid_with_home(&home).args(["ops", "add"]).arg(&op))?;
    let v1 = added.split_whitespace().nth(2).unwrap_or_default().to_string();
    expect_eq("braid ops add", &added, &format!("op_shout 0.1.0 {v1}\n"))?;

    // Native, node and web, each running the new body.
    let input = tmp.path().join("input.txt");
    std::fs::write(&input, "hello")?;
    let manifest = text_workflow(tmp.path(), "shout", r#"{ "operation": "op_shout", "version": "^0.1" }"#)?;
    let out = tmp.path().join("out");
    run(braid_with_home(&home).arg("build").arg(&manifest).arg("-o").arg(&out).args(["--targets", "native,node,web"]))?;
    let native = stdout(braid_with_home(&home).arg("run").arg(&manifest).arg("--input").arg(&input))?;
    expect_eq("native output (hex of HELLO)", native.trim(), "48454c4c4f")?;
    let js = r#"
        const [node, web, wasm] = process.argv.slice(1);
        const text = (bytes) => Buffer.from(bytes).toString();
        const fromNode = text(await require(node).run(['hello']));
        const pkg = await import(web);
        pkg.initSync({ module: require('fs').readFileSync(wasm) });
        console.log(fromNode + ' ' + text(await pkg.run(['hello'])));
    "#;
    let js = format!("(async () => {{ {js} }})().catch((e) => {{ console.error(e); process.exit(1); }});");
    let printed = stdout(
        Command::new("node")
            .arg("-e")
            .arg(js)
            .arg(out.join("pkg/node/wf_shout.js"))
            .arg(out.join("pkg/web/wf_shout.js"))
            .arg(out.join("pkg/web/wf_shout_bg.wasm")),
    )?;
    expect_eq("node and web outputs", printed.trim(), "HELLO HELLO")?;

    // The same sources again: nothing changes. Other code, same version: refused.
    let again = stdout(braid_with_home(&home).args(["ops", "add", "--no-build"]).arg(&op))?;
    expect_eq("adding the same sources again", &again, &format!("op_shout 0.1.0 {v1}  (already registered)\n"))?;
    rewrite(
        &lib,
        "Ok(input.to_ascii_uppercase())",
        "let mut out = input.to_ascii_uppercase();\n    out.push(b'!');\n    Ok(out)",
    )?;
    rewrite(&lib, "assert_eq!(out, *b\"ABC\");", "assert_eq!(out, *b\"ABC!\");")?;
    let refused = braid_with_home(&home).args(["ops", "add", "--no-build"]).arg(&op).output()?;
    let err = String::from_utf8_lossy(&refused.stderr);
    if refused.status.success() || !err.contains("already registered with other sources") {
        return Err(format!("other code under 0.1.0 was not refused: {err}").into());
    }
    // Bumped, it is a second version next to the first.
    rewrite(&op.join("Cargo.toml"), "version = \"0.1.0\"", "version = \"0.2.0\"")?;
    cargo_test(&op)?;
    let added = stdout(braid_with_home(&home).args(["ops", "add"]).arg(&op))?;
    let v2 = added.split_whitespace().nth(2).unwrap_or_default().to_string();
    expect_eq("braid ops add (0.2.0)", &added, &format!("op_shout 0.2.0 {v2}\n"))?;
    let shown = stdout(braid_with_home(&home).args(["ops", "op_shout"]))?;
    if !shown.contains(&v1) || !shown.contains(&v2) {
        return Err(format!("braid ops op_shout does not list both versions:\n{shown}").into());
    }
    let cases = [
        ("by_req_1", r#"{ "operation": "op_shout", "version": "^0.1" }"#.to_string(), "48454c4c4f"),
        ("by_req_2", r#"{ "operation": "op_shout", "version": "^0.2" }"#.to_string(), "48454c4c4f21"),
        ("newest", r#"{ "operation": "op_shout" }"#.to_string(), "48454c4c4f21"),
        ("by_id_1", format!(r#"{{ "versionId": "{v1}" }}"#), "48454c4c4f"),
        ("by_id_2", format!(r#"{{ "versionId": "{v2}" }}"#), "48454c4c4f21"),
    ];
    for (name, step, expected) in cases {
        let manifest = text_workflow(tmp.path(), name, &step)?;
        let native = stdout(braid_with_home(&home).arg("run").arg(&manifest).arg("--input").arg(&input))?;
        expect_eq(&format!("{name}: {step}"), native.trim(), expected)?;
    }
    // Built with the version a submission resolved before 0.2.0 came (as
    // the service builds): 0.1.0, though the manifest asks for the newest.
    let newest = tmp.path().join("newest.json");
    let pinned = tmp.path().join("pinned");
    run(braid_with_home(&home)
        .arg("build")
        .arg(&newest)
        .arg("-o")
        .arg(&pinned)
        .args(["--targets", "native"])
        .args(["--operations", &v1]))?;
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(pinned.join("report.json"))?)?;
    expect_eq("the version built", report["operations"]["op_shout"].as_str().unwrap_or_default(), &v1)?;
    let vendored: Vec<String> = std::fs::read_dir(pinned.join("crate/vendor"))?
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|name| name.starts_with("op_shout-"))
        .map(|name| {
            std::fs::read_to_string(pinned.join("crate/vendor").join(name).join("Cargo.toml")).unwrap_or_default()
        })
        .collect();
    if vendored.len() != 1 || !vendored[0].contains("version = \"0.1.0\"") {
        return Err(format!("the crate does not vendor op_shout 0.1.0 alone: {vendored:?}").into());
    }
    Ok(())
}

/// A crate of value types only, shared: `op_shapes` defines `Point` and
/// `Side` (a choice) and has no operation (`kind = "types"`); `op_point`
/// (Bytes -> Point), `op_point_text` (Point -> String) and `op_side`
/// (Point -> Side), each its own crate, depend on it by version. All four
/// are added with `braid ops add` (built in the sandbox for their
/// targets); a workflow chaining the first two builds and runs natively
/// and in Node; one ending in `Side` is built as a component (a WIT enum)
/// whose output in the executor is the native runner's; naming
/// `op_shapes` as a step is refused.
fn a_crate_of_value_types_is_shared_by_two_operations() -> Result<(), Failed> {
    let tmp = tempfile::tempdir()?;
    let home = tmp.path().join("home");
    let scaffold = |name: &str, cargo_extra: &str, lib: &str| -> Result<PathBuf, Failed> {
        let dir = tmp.path().join(name);
        run(braid_with_home(&home).args(["new", "op", name, "-o"]).arg(&dir))?;
        let cargo = dir.join("Cargo.toml");
        let text = std::fs::read_to_string(&cargo)?;
        std::fs::write(&cargo, format!("{text}{cargo_extra}"))?;
        std::fs::write(dir.join("src/lib.rs"), lib)?;
        Ok(dir)
    };
    let shapes = scaffold(
        "op_shapes",
        "\n[package.metadata.braid]\nkind = \"types\"\n",
        "//! Shapes shared by operations.\n#![no_std]\n\n\
         /// A point.\n#[derive(Clone, Debug, PartialEq, braid_macros::Value)]\npub struct Point {\n    pub x: u32,\n    pub y: u32,\n}\n\n\
         /// Where a point lies.\n#[derive(Clone, Copy, Debug, PartialEq, braid_macros::Value)]\n\
         pub enum Side {\n    AboveDiagonal,\n    OnOrBelow,\n}\n",
    )?;
    // By version (the path is for local builds; registering drops it), its
    // std build only in this crate's.
    let uses_shapes = "op_shapes = { version = \"0.1\", path = \"../op_shapes\", default-features = false }\n";
    let point = scaffold(
        "op_point",
        uses_shapes,
        "#![no_std]\nuse braid_support::{Config, Error};\nuse op_shapes::Point;\n\n\
         /// Its length and the sum of its bytes.\n#[braid_macros::operation(groups = [\"SYS\"])]\n\
         pub async fn execute(input: &[u8], config: &Config) -> Result<op_shapes::Point, Error> {\n    let _ = config;\n    \
         Ok(Point { x: input.len() as u32, y: input.iter().map(|b| u32::from(*b)).sum() })\n}\n",
    )?;
    let text = scaffold(
        "op_point_text",
        uses_shapes,
        "#![no_std]\nextern crate alloc;\nuse alloc::string::String;\nuse braid_support::{Config, Error};\n\n\
         /// `x,y`.\n#[braid_macros::operation(groups = [\"SYS\"])]\n\
         pub async fn execute(point: &op_shapes::Point, config: &Config) -> Result<String, Error> {\n    let _ = config;\n    \
         Ok(alloc::format!(\"{},{}\", point.x, point.y))\n}\n",
    )?;
    let side = scaffold(
        "op_side",
        uses_shapes,
        "#![no_std]\nuse braid_support::{Config, Error};\nuse op_shapes::Side;\n\n\
         /// Whether `y` is above `x`.\n#[braid_macros::operation(groups = [\"SYS\"])]\n\
         pub async fn execute(point: &op_shapes::Point, config: &Config) -> Result<op_shapes::Side, Error> {\n    \
         let _ = config;\n    Ok(if point.y > point.x { Side::AboveDiagonal } else { Side::OnOrBelow })\n}\n",
    )?;
    for dir in [&point, &text, &side] {
        rewrite(
            &dir.join("Cargo.toml"),
            "std = [\"braid-support/std\"]",
            "std = [\"braid-support/std\", \"op_shapes/std\"]",
        )?;
    }
    for dir in [&shapes, &point, &text, &side] {
        run(braid_with_home(&home).args(["ops", "add"]).arg(dir))?;
    }
    let listed = stdout(braid_with_home(&home).arg("ops"))?;
    if !listed.lines().any(|l| l.starts_with("op_shapes") && l.contains("types: Point")) {
        return Err(format!("braid ops does not show op_shapes as a crate of types:\n{listed}").into());
    }
    let manifest = tmp.path().join("points.json");
    std::fs::write(
        &manifest,
        r#"{ "name": "points", "version": "0.1.0", "segments": [
  { "inputs": [-1], "sequence": [{ "operation": "op_point", "version": "^0.1" }] },
  { "inputs": [0], "sequence": [{ "operation": "op_point_text", "version": "^0.1" }] } ] }"#,
    )?;
    let out = tmp.path().join("out");
    run(braid_with_home(&home).arg("build").arg(&manifest).arg("-o").arg(&out).args(["--targets", "native,node"]))?;
    let input = tmp.path().join("input.txt");
    std::fs::write(&input, "hello")?;
    let native = stdout(braid_with_home(&home).arg("run").arg(&manifest).arg("--input").arg(&input))?;
    expect_eq("native output", native.trim(), "5,532")?;
    let js = "console.log(require(process.argv[1]).runSync([Buffer.from('hello')]))";
    let node = stdout(Command::new("node").arg("-e").arg(js).arg(out.join("pkg/node/wf_points.js")))?;
    expect_eq("Node output", node.trim(), "5,532")?;
    // A choice (a WIT enum) out of a component, as the native runner gives it.
    let sides = tmp.path().join("sides.json");
    std::fs::write(
        &sides,
        r#"{ "name": "sides", "version": "0.1.0", "segments": [
  { "inputs": [-1], "sequence": [{ "operation": "op_point", "version": "^0.1" }, { "operation": "op_side", "version": "^0.1" }] } ] }"#,
    )?;
    let sides_out = tmp.path().join("sides");
    run(braid_with_home(&home).arg("build").arg(&sides).arg("-o").arg(&sides_out).args(["--targets", "component"]))?;
    let wit = std::fs::read_to_string(sides_out.join("component/world.wit"))?;
    if !wit.contains("enum %side {\n    %above-diagonal,\n    %on-or-below,\n  }") {
        return Err(format!("no WIT enum for Side:\n{wit}").into());
    }
    let native = stdout(braid_with_home(&home).arg("run").arg(&sides).arg("--input").arg(&input))?;
    let wasm =
        stdout(braid_with_home(&home).arg("run").arg(&sides).arg("--input").arg(&input).args(["--engine", "wasm"]))?;
    expect_eq("native output of sides", native.trim(), "\"aboveDiagonal\"")?;
    expect_eq("sides in the executor", wasm.trim(), native.trim())?;
    // The types crate as a step: refused, saying what it is.
    let bad = tmp.path().join("bad.json");
    std::fs::write(
        &bad,
        r#"{ "name": "bad", "version": "0.1.0", "segments": [
  { "inputs": [-1], "sequence": [{ "operation": "op_shapes", "version": "^0.1" }] } ] }"#,
    )?;
    let refused = braid_with_home(&home).arg("validate").arg(&bad).output()?;
    let err = String::from_utf8_lossy(&refused.stderr);
    if refused.status.success() || !err.contains("op_shapes is a crate of value types only, not an operation") {
        return Err(format!("a types crate as a step was not refused as such:\n{err}").into());
    }
    Ok(())
}

/// `op_trap`, an operation that misbehaves on demand (`trap`: a panic,
/// which is a trap under `panic = "abort"`; `oom`: an allocation larger
/// than Wasm memory holds; `loop`: forever; `grow`: 1 MiB more at a time
/// until refused; `count`: a `static` counter, returned; `big`: 8 MiB of
/// output; anything else is echoed), added with `braid ops add` to a
/// registry of its own, and the workflow `trapping` over it built for Node,
/// the web and bundlers into `target/wf/trapping` (the JS tests trap it a hundred
/// times and check that every next call still answers; the source is kept
/// in `target/wf/op_trap` for the service's tests). Then the same
/// workflow in the executor (`braid run --engine wasm`): each misbehaviour
/// is stopped by its budget with an error naming it, the counter reads 1
/// on every run (a fresh instance each time), and a valid input still
/// answers.
fn a_trapping_workflow_is_built_for_the_js_tests() -> Result<(), Failed> {
    let tmp = tempfile::tempdir()?;
    let home = tmp.path().join("home");
    // Kept for js/test/run.test.mjs, which adds it to a service's registry.
    let dir = wf_out().join("op_trap");
    if dir.exists() {
        std::fs::remove_dir_all(&dir)?;
    }
    run(braid_with_home(&home).args(["new", "op", "op_trap", "-o"]).arg(&dir))?;
    std::fs::write(
        dir.join("src/lib.rs"),
        r#"//! Misbehaves on demand, for tests.
#![no_std]
extern crate alloc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU32, Ordering};
use braid_support::{Bytes, Config, Error};

static RUNS: AtomicU32 = AtomicU32::new(0);

/// `trap` panics, `oom` asks for more memory than Wasm has, `loop` never
/// ends, `grow` allocates until refused, `count` returns how many times it
/// ran in this instance, `big` returns 8 MiB; the rest is echoed.
#[braid_macros::operation(groups = ["SYS"])]
pub async fn execute(input: &[u8], config: &Config) -> Result<Bytes, Error> {
    let _ = config;
    match input {
        b"trap" => panic!("op_trap: asked to trap"),
        b"oom" => {
            let huge: Vec<u8> = alloc::vec![1; 3 << 30];
            Ok(huge[..1].to_vec().into())
        }
        b"loop" => {
            let mut n: u64 = 0;
            loop {
                n = core::hint::black_box(n.wrapping_add(1));
            }
        }
        b"grow" => {
            let mut kept: Vec<Vec<u8>> = Vec::new();
            loop {
                kept.push(core::hint::black_box(alloc::vec![1; 1 << 20]));
            }
        }
        b"count" => {
            let n = RUNS.fetch_add(1, Ordering::Relaxed) + 1;
            Ok(alloc::format!("{n}").into_bytes().into())
        }
        b"big" => Ok(alloc::vec![7; 8 << 20].into()),
        _ => Ok(input.to_vec().into()),
    }
}
"#,
    )?;
    run(braid_with_home(&home).args(["ops", "add"]).arg(&dir))?;
    let manifest = tmp.path().join("trapping.json");
    std::fs::write(
        &manifest,
        r#"{ "name": "trapping", "version": "0.1.0", "description": "traps on demand (a test)", "segments": [
  { "inputs": [-1], "sequence": [{ "operation": "op_trap", "version": "^0.1" }] } ] }"#,
    )?;
    let out = wf_out().join("trapping");
    run(braid_with_home(&home)
        .arg("build")
        .arg(&manifest)
        .arg("-o")
        .arg(&out)
        .args(["--targets", "node,web,bundler"]))?;

    // In the executor.
    let wasm_run = |input: &str, limits: &[&str]| -> Result<(bool, String), Failed> {
        let file = tmp.path().join("input");
        std::fs::write(&file, input)?;
        let out = braid_with_home(&home)
            .arg("run")
            .arg(&manifest)
            .arg("--input")
            .arg(&file)
            .args(["--engine", "wasm"])
            .args(limits)
            .output()?;
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        if !out.status.success() && out.status.code() != Some(3) {
            return Err(format!("braid run --engine wasm on {input:?} exited {}: {text}", out.status).into());
        }
        Ok((out.status.success(), text))
    };
    for (input, limits, expected) in [
        ("loop", &["--time-limit", "200"][..], "took longer than its 200 ms"),
        ("grow", &["--memory-limit", "64"][..], "more than its 67108864 bytes of memory"),
        ("trap", &[][..], "the module trapped"),
        ("oom", &[][..], "the module trapped"),
        ("big", &["--output-limit", "1"][..], "the output is over the limit of 1048576 bytes"),
        // Under the component's own memory at start: the budget says so.
        (
            "hello",
            &["--memory-limit", "1"][..],
            "bytes of memory to start, more than its memory limit of 1048576 bytes",
        ),
    ] {
        let (ok, text) = wasm_run(input, limits)?;
        if ok || !text.contains(expected) {
            return Err(format!("{input}: expected a failure saying {expected:?}, got: {text}").into());
        }
    }
    for _ in 0..3 {
        // The output is Bytes, printed as hex: "31" is the text "1".
        expect_eq("count in a fresh instance", &wasm_run("count", &[])?.1, "31\n")?;
    }
    expect_eq("an echo after it all", &wasm_run("hello", &[])?.1, "68656c6c6f\n")
}

/// The code blocks under `heading` in a page of the book, by language:
/// what a reader copies, taken as it is.
fn book_blocks(page: &str, heading: &str, language: &str) -> Result<Vec<String>, Failed> {
    let text = std::fs::read_to_string(root().join("docs/src").join(page))?;
    let section = text.split_once(heading).ok_or_else(|| format!("{page} has no {heading:?}"))?.1;
    let section = section.split("\n## ").next().unwrap_or(section);
    let fence = format!("```{language}\n");
    Ok(section
        .split(&fence)
        .skip(1)
        .filter_map(|block| block.split_once("```").map(|(code, _)| code.to_string()))
        .collect())
}

/// The book's worked example of an operation (writing-an-operation.md):
/// its `src/lib.rs` and its place in `photo_proof`, taken from the page,
/// registered and built; the photo passes at the default size, and a size
/// over the photo's is refused with the error the page shows.
fn the_books_worked_example_builds_and_runs() -> Result<(), Failed> {
    let page = "guide/writing-an-operation.md";
    let heading = "## A worked example";
    let lib = book_blocks(page, heading, "rust")?.into_iter().next().ok_or("no Rust block")?;
    let segment: serde_json::Value =
        serde_json::from_str(&book_blocks(page, heading, "json")?.into_iter().next().ok_or("no JSON block")?)?;
    let tmp = tempfile::tempdir()?;
    let home = tmp.path().join("home");
    let dir = tmp.path().join("op_min_size");
    run(braid_with_home(&home).args(["new", "op", "op_min_size", "-o"]).arg(&dir))?;
    std::fs::write(dir.join("src/lib.rs"), lib)?;
    run(braid_with_home(&home).args(["ops", "add"]).arg(&dir))?;
    let photo = root().join("workflows/samples/images/photo.jpg");
    let manifest = tmp.path().join("photo_proof.json");
    let with_min = |min: &str| -> Result<(bool, String), Failed> {
        let mut workflow: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(root().join("workflows/photo_proof.json"))?)?;
        let mut segment = segment.clone();
        segment["sequence"][0]["config"]["min"] = min.into();
        workflow["segments"][0] = segment;
        std::fs::write(&manifest, workflow.to_string())?;
        let out = braid_with_home(&home).arg("run").arg(&manifest).arg("--input").arg(&photo).output()?;
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        if !out.status.success() && out.status.code() != Some(3) {
            return Err(format!("braid run with min {min} exited {}: {text}", out.status).into());
        }
        Ok((out.status.success(), text))
    };
    let (ok, proof) = with_min("1024")?;
    if !ok || !proof.contains("\"width\":64") {
        return Err(format!("the photo was not proved through op_min_size: {proof}").into());
    }
    let (ok, refused) = with_min("65536")?;
    let expected = "op_min_size: invalid input: the file has 2311 bytes, fewer than the 65536 this workflow asks for";
    if ok || !refused.contains(expected) {
        return Err(format!("expected {expected:?}, got: {refused}").into());
    }
    Ok(())
}

/// `braid build MANIFEST -o OUT [--targets ...]`.
fn build(manifest: &Path, out: &Path, targets: Option<&str>) -> Result<(), Failed> {
    let mut command = braid();
    command.arg("build").arg(manifest).arg("-o").arg(out);
    if let Some(targets) = targets {
        command.args(["--targets", targets]);
    }
    run(&mut command)
}

/// The example workflows and the two test ones the JS tests use (hostile
/// strings; an Array as the external input).
fn workflows() -> Vec<PathBuf> {
    let root = root();
    let mut list: Vec<PathBuf> = std::fs::read_dir(root.join("workflows"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json") && !p.ends_with("vectors.json"))
        .collect();
    list.sort();
    list.push(root.join("generator/braid/tests/data/nasty.json"));
    list.push(root.join("generator/braid/tests/data/concat_hex.json"));
    list
}

fn stem(path: &Path) -> String {
    path.file_stem().unwrap().to_string_lossy().into_owned()
}

/// Where `braid build --targets component` writes workflow components.
fn component_out() -> PathBuf {
    root().join("target/wf-component")
}

/// Builds the workflow at `path` as a component and as an HTTP function
/// (`http/`), if `build/<name>` built its Node package (its operations
/// build for Wasm); its WIT world is the crate's.
fn build_component(path: &Path, name: &str) -> Result<(), Failed> {
    let wf = wf_out().join(name);
    if !wf.join("report.json").is_file() {
        build(path, &wf, None)?;
    }
    let report = std::fs::read_to_string(wf.join("report.json"))?;
    if !report.contains("\"node\"") {
        return Ok(());
    }
    let out = component_out().join(name);
    build(path, &out, Some("component,http"))?;
    // (Named by the manifest's name, which may not be the file's.)
    let names = |dir: &str| -> Result<Vec<String>, Failed> {
        let mut names: Vec<String> =
            std::fs::read_dir(out.join(dir))?.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        Ok(names)
    };
    expect_eq("the HTTP function's files", &names("http")?.join(" "), &names("component")?.join(" "))?;
    let wit = std::fs::read_to_string(out.join("component/world.wit"))?;
    expect_eq("component/world.wit", &wit, &std::fs::read_to_string(out.join("crate/wit/world.wit"))?)?;
    if !wit.contains("export run: func(") {
        return Err(format!("{name}: world.wit exports no run:\n{wit}").into());
    }
    Ok(())
}

/// `target/wf/<name>`, built now if it is not there yet.
fn built(name: &str) -> Result<PathBuf, Failed> {
    let out = wf_out().join(name);
    if !out.join("report.json").is_file() {
        // An example for every target it allows; a test one (tests/data)
        // for native Rust alone.
        let example = root().join("workflows").join(format!("{name}.json"));
        match example.is_file() {
            true => build(&example, &out, None)?,
            false => build(&root().join(format!("generator/braid/tests/data/{name}.json")), &out, Some("native"))?,
        }
    }
    Ok(out)
}

/// Files under `dir`, recursively.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out
}

/// Fails if `bytes` contain the repository's absolute path.
fn no_absolute_path(what: &Path, bytes: &[u8]) -> Result<(), Failed> {
    let root = root();
    let needle = root.to_str().unwrap().as_bytes();
    if bytes.windows(needle.len()).any(|w| w == needle) {
        return Err(format!("{} contains the absolute path {}", what.display(), root.display()).into());
    }
    Ok(())
}

/// The crate is self-contained: copied elsewhere, it builds offline, and
/// none of its files names the repository.
fn standalone_crate_builds_away_from_the_repository() -> Result<(), Failed> {
    let out = built("dual_cid_of_text")?;
    let dir = tempfile::tempdir()?;
    let copy = dir.path().join("crate");
    for file in files(&out.join("crate")) {
        let to = copy.join(file.strip_prefix(out.join("crate")).unwrap());
        std::fs::create_dir_all(to.parent().unwrap())?;
        let bytes = std::fs::read(&file)?;
        no_absolute_path(&file, &bytes)?;
        std::fs::write(&to, bytes)?;
    }
    run(cargo().args(["build", "--quiet", "--offline", "--target-dir"]).arg(braid_target_dir()).current_dir(&copy))
}

/// Rust programs depending on a generated crate (`tests/consumer`,
/// `tests/consumer_images` of the `braid` crate: a value type of one's own
/// as input and output, and `tests/consumer_thumbnails`: one defined by a
/// crate the operations depend on; `tests/consumer_shared`: an input given
/// to two segments, kept across a suspend), each lock started from the
/// generated crate's.
fn a_rust_program_uses_a_generated_crate() -> Result<(), Failed> {
    for (workflow, consumer) in [
        ("salted_cid", "consumer"),
        ("decoded_images", "consumer_images"),
        ("thumbnail_hashes", "consumer_thumbnails"),
        ("cidv1_from_bytes", "consumer_stream"),
        ("salted_text", "consumer_shared"),
    ] {
        let out = built(workflow)?;
        let consumer = root().join("generator/braid/tests").join(consumer);
        std::fs::copy(out.join("crate/Cargo.lock"), consumer.join("Cargo.lock"))?;
        run(cargo()
            .args(["test", "--quiet", "--manifest-path"])
            .arg(consumer.join("Cargo.toml"))
            .arg("--target-dir")
            .arg(braid_target_dir()))?;
    }
    Ok(())
}

/// `braid run` (native) gives what independent implementations compute
/// (`workflows/samples/images/proofs.json`: multiformats, @noble/hashes and
/// blockhash-core on pngjs's or jpeg-js's pixels): photo_proof exactly for
/// PNG, for JPEG the file's CID and size exactly and the blockhash within 4
/// bits (JPEG decoders are not bit-exact); photo_similarity the distance
/// those digits give; a broken file is an error.
fn the_image_workflows_run_natively_as_the_references_say() -> Result<(), Failed> {
    let images = root().join("workflows/samples/images");
    let proofs: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(images.join("proofs.json"))?)?;
    let run_wf = |workflow: &str, inputs: &[&str]| {
        let mut cmd = braid();
        cmd.arg("run").arg(root().join(format!("workflows/{workflow}.json")));
        for input in inputs {
            cmd.arg("--input").arg(images.join(input));
        }
        cmd
    };
    let distance = |a: &str, b: &str| -> Result<u32, Failed> {
        Ok((u64::from_str_radix(a, 16)? ^ u64::from_str_radix(b, 16)?).count_ones())
    };
    for (name, expected) in proofs.as_object().ok_or("proofs.json is not an object")? {
        let found: serde_json::Value = serde_json::from_str(&stdout(&mut run_wf("photo_proof", &[name]))?)?;
        if name.ends_with(".png") {
            expect_eq(&format!("photo_proof of {name}"), &found.to_string(), &expected.to_string())?;
            continue;
        }
        for key in ["fileCid", "width", "height"] {
            expect_eq(&format!("photo_proof of {name}: {key}"), &found[key].to_string(), &expected[key].to_string())?;
        }
        let (ours, theirs) = (found["blockhash"].as_str().unwrap_or(""), expected["blockhash"].as_str().unwrap_or(""));
        if distance(ours, theirs)? > 4 {
            return Err(format!("photo_proof of {name}: blockhash {ours}, blockhash-core's {theirs}").into());
        }
    }
    let (a, b) = ("photo.png", "alpha.png");
    let d = distance(proofs[a]["blockhash"].as_str().unwrap_or(""), proofs[b]["blockhash"].as_str().unwrap_or(""))?;
    let found: serde_json::Value = serde_json::from_str(&stdout(&mut run_wf("photo_similarity", &[a, b]))?)?;
    expect_eq("photo_similarity distance", &found["distance"].to_string(), &d.to_string())?;
    // The workflow failing is exit status 3, said once.
    let out = run_wf("photo_proof", &["exif.jpg.tags.json"]).output()?;
    let err = String::from_utf8_lossy(&out.stderr);
    if out.status.code() != Some(3)
        || !err.starts_with("error: workflow photo_proof failed: ")
        || !err.contains("not a PNG or JPEG file")
        || err.contains("error: error")
    {
        return Err(format!("photo_proof of a JSON file: {}, {err}", out.status).into());
    }
    // A missing input file is exit status 2.
    let out = run_wf("photo_proof", &["no-such-file.png"]).output()?;
    let err = String::from_utf8_lossy(&out.stderr);
    if out.status.code() != Some(2) || !err.contains("cannot read ") || !err.contains("no-such-file.png") {
        return Err(format!("photo_proof of a missing file: {}, {err}", out.status).into());
    }
    Ok(())
}

/// A new workflow over operations already compiled compiles only itself:
/// the operations' Wasm rlibs are not rewritten.
fn a_new_workflow_reuses_the_operations_already_built() -> Result<(), Failed> {
    built("cidv1_from_bytes")?;
    let deps = braid_target_dir().join("wasm32-unknown-unknown/release/deps");
    let rlibs = || -> Result<Vec<(PathBuf, SystemTime)>, Failed> {
        let mut list = Vec::new();
        for entry in std::fs::read_dir(&deps)? {
            let path = entry?.path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if (name.starts_with("libop_multihash-") || name.starts_with("libbraid_support-"))
                && name.ends_with(".rlib")
            {
                list.push((path.clone(), std::fs::metadata(&path)?.modified()?));
            }
        }
        list.sort();
        Ok(list)
    };
    let before = rlibs()?;
    if before.is_empty() {
        return Err(format!("no operation rlib in {}", deps.display()).into());
    }
    let dir = tempfile::tempdir()?;
    let text = std::fs::read_to_string(root().join("workflows/cidv1_from_bytes.json"))?;
    let manifest = dir.path().join("reuse_check.json");
    std::fs::write(&manifest, text.replace("\"cidv1_from_bytes\"", "\"reuse_check\""))?;
    build(&manifest, &dir.path().join("out"), Some("node"))?;
    let after = rlibs()?;
    if before != after {
        return Err(format!("a new workflow recompiled its operations:\nbefore {before:?}\nafter  {after:?}").into());
    }
    Ok(())
}

/// `workflows/cidv1_from_bytes.json` built with `args` into `target/wf-<name>`,
/// through a cargo target directory of its own (`target/braid-<name>`).
fn cid_built_elsewhere(name: &str, args: &[&str]) -> Result<PathBuf, Failed> {
    let out = root().join(format!("target/wf-{name}"));
    let mut command = braid();
    command
        .env("BRAID_TARGET_DIR", root().join(format!("target/braid-{name}")))
        .args(["build", "workflows/cidv1_from_bytes.json", "-o"])
        .arg(&out)
        .args(args)
        .current_dir(root());
    run(&mut command)?;
    Ok(out)
}

/// Another output directory and another cargo target directory (so another
/// staging directory) give the same `.wasm`, the npm package's and the two
/// components', and none names a local path.
fn a_second_build_elsewhere_gives_the_same_wasm() -> Result<(), Failed> {
    let first = built("cidv1_from_bytes")?;
    let again = cid_built_elsewhere("again", &["--targets", "node,component,http"])?;
    let component = component_out().join("cidv1_from_bytes");
    if !component.join("report.json").is_file() {
        build_component(&root().join("workflows/cidv1_from_bytes.json"), "cidv1_from_bytes")?;
    }
    for (first, wasm) in [
        (&first, "pkg/node/wf_cidv1_from_bytes_bg.wasm"),
        (&component, "component/wf_cidv1_from_bytes.wasm"),
        (&component, "http/wf_cidv1_from_bytes.wasm"),
    ] {
        let (a, b) = (std::fs::read(first.join(wasm))?, std::fs::read(again.join(wasm))?);
        if a != b {
            return Err(format!("{} and {} differ", first.join(wasm).display(), again.join(wasm).display()).into());
        }
        no_absolute_path(&again.join(wasm), &b)?;
    }
    Ok(())
}

/// The CID workflow's HTTP function holds at most 24 KiB of data (its
/// memory image, which each fresh instance maps: at 70 KiB it answered 10 %
/// fewer requests under `wasmtime serve`, see the contributor guide's
/// benchmarks), and none of the tables it once carried without needing
/// them: serde_json's float writer, core's float parser, Unicode's case
/// tables (told by their first bytes).
fn the_http_function_keeps_a_small_memory_image() -> Result<(), Failed> {
    let component = component_out().join("cidv1_from_bytes");
    if !component.join("report.json").is_file() {
        build_component(&root().join("workflows/cidv1_from_bytes.json"), "cidv1_from_bytes")?;
    }
    let bytes = std::fs::read(component.join("http/wf_cidv1_from_bytes.wasm"))?;
    let mut data = Vec::new();
    for payload in wasmparser::Parser::new(0).parse_all(&bytes) {
        if let wasmparser::Payload::DataSection(section) = payload? {
            for segment in section {
                data.extend_from_slice(segment?.data);
            }
        }
    }
    if data.len() > 24 << 10 {
        return Err(format!("the HTTP function's data is {} bytes, over 24 KiB", data.len()).into());
    }
    // `to_lowercase`'s table starts with the pairs (À, à), (Á, á): 0xc0, 0xe0.
    let case_table: Vec<u8> = [0xc0u32, 0xe0, 0xc1, 0xe1].iter().flat_map(|n| n.to_le_bytes()).collect();
    for (what, needle) in [("Unicode's case tables", &case_table[..]), ("a float writer's exponents", b"e-308")] {
        if data.windows(needle.len()).any(|w| w == needle) {
            return Err(format!("the HTTP function's data holds {what}").into());
        }
    }
    Ok(())
}

/// The Wasm packages use SIMD by default; `--no-simd` leaves no SIMD
/// instruction in the module (blake3's included), for engines without it,
/// and gives the same outputs. Each module is validated with and without
/// Wasm's SIMD feature.
fn wasm_simd_is_the_default_and_no_simd_leaves_none() -> Result<(), Failed> {
    let with = built("cidv1_from_bytes")?;
    let without = cid_built_elsewhere("no-simd", &["--no-simd", "--targets", "node"])?;
    let mut features = wasmparser::WasmFeatures::default();
    features.remove(wasmparser::WasmFeatures::SIMD | wasmparser::WasmFeatures::RELAXED_SIMD);
    // The validator's error when SIMD is used (a read error is the test's).
    let without_simd = |dir: &Path| -> Result<Option<String>, Failed> {
        let bytes = std::fs::read(dir.join("pkg/node/wf_cidv1_from_bytes_bg.wasm"))?;
        Ok(wasmparser::Validator::new_with_features(features).validate_all(&bytes).err().map(|e| e.to_string()))
    };
    if without_simd(&with)?.is_none() {
        return Err("the default build's module holds no SIMD instruction".into());
    }
    if let Some(error) = without_simd(&without)? {
        return Err(format!("the --no-simd build's module is not valid without SIMD: {error}").into());
    }
    let js = "const [a, b] = process.argv.slice(1).map(require); \
              const x = new TextEncoder().encode('with and without SIMD'); \
              console.log(a.runSync([x]) === b.runSync([x]))";
    let same = stdout(
        Command::new("node")
            .arg("-e")
            .arg(js)
            .arg(with.join("pkg/node/wf_cidv1_from_bytes.js"))
            .arg(without.join("pkg/node/wf_cidv1_from_bytes.js")),
    )?;
    expect_eq("the two builds' outputs are equal", same.trim(), "true")
}

/// `braid` installed with the README's command into a temporary root
/// works with the checkout out of sight: in a bubblewrap sandbox where the
/// checkout is an empty directory, from a directory elsewhere, with a fresh
/// registry home, only the shared target directory of the checkout mounted
/// and no `BRAID_ROOT`, `braid doctor`
/// passes and a workflow builds for native and node and gives the right CID
/// in both. wasm-opt comes from where `braid doctor` says to put it.
fn the_installed_braid_works_outside_the_checkout() -> Result<(), Failed> {
    let tmp = tempfile::tempdir()?;
    let prefix = tmp.path().join("root");
    // The README's install command, plus --root, and --debug with the
    // workspace's target directory: it then installs the binary `make`
    // built (a release build from scratch, fat LTO, is minutes of
    // `make test`), and what this trial checks, that the installed binary
    // needs nothing from the checkout, does not depend on the profile.
    run(cargo()
        .args(["install", "--locked", "--quiet", "--debug", "--path"])
        .arg(root().join("generator/cli"))
        .arg("--root")
        .arg(&prefix)
        .env("CARGO_TARGET_DIR", root().join("target")))?;
    let home = tmp.path().join("home");
    let work = tmp.path().join("work");
    std::fs::create_dir_all(&work)?;
    run(Command::new("npm")
        .args(["install", "--silent", "--no-audit", "--no-fund", "--prefix"])
        .arg(home.join("tools"))
        .arg(format!("binaryen@{}", braid::package::js::WASM_OPT_NPM_VERSION)))?;
    let text = std::fs::read_to_string(root().join("workflows/cidv1_from_bytes.json"))?;
    std::fs::write(work.join("workflow.json"), text)?;
    std::fs::write(work.join("input.txt"), "hello world")?;
    let path = std::env::var("PATH").unwrap_or_default();
    let outside: Vec<&str> = path.split(':').filter(|dir| !dir.starts_with(root().to_str().unwrap())).collect();
    let sandboxed = |program: &Path, args: &[&str]| -> Command {
        let mut command = Command::new("bwrap");
        command
            .args(["--bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs"])
            .arg(root())
            // The shared target directory, at its own path: the operations
            // are built already (a cold build here would be minutes of
            // `make test`), and at another path cargo would rebuild them
            // and the next build outside would again (the paths are in the
            // fingerprints). It holds build output and vendored copies, no
            // file of the checkout's; the binary's own files (registry,
            // runtime crates) come from the fresh home.
            .arg("--bind")
            .arg(braid_target_dir())
            .arg(braid_target_dir())
            .arg("--chdir")
            .arg(&work)
            .arg("--")
            .arg(program)
            .args(args)
            .env_remove("BRAID_ROOT")
            .env("BRAID_HOME", &home)
            .env("BRAID_TARGET_DIR", braid_target_dir())
            .env("PATH", outside.join(":"));
        command
    };
    run(&mut sandboxed(Path::new("/bin/sh"), &["-c", &format!("test ! -e {}/Cargo.toml", root().display())]))
        .map_err(|_| "the checkout is still visible in the sandbox")?;
    let braid = prefix.join("bin/braid");
    run(&mut sandboxed(&braid, &["doctor"]))?;
    run(&mut sandboxed(&braid, &["build", "workflow.json", "-o", "out", "--targets", "native,node"]))?;
    // CIDv1 (blake3, raw, base32) of "hello world".
    let expected = "bafkr4igxjga67jykbseaxdmmdgc5a5o3zp3htom2l6mrjznk7fvyggu6eq";
    let native = stdout(&mut sandboxed(&braid, &["run", "workflow.json", "--input", "input.txt"]))?;
    expect_eq("native CID", native.trim(), expected)?;
    let js = "require(process.argv[1]).run([new TextEncoder().encode('hello world')]).then((c) => console.log(c))";
    let node = stdout(&mut sandboxed(
        Path::new("/usr/bin/env"),
        &["node", "-e", js, work.join("out/pkg/node/wf_cidv1_from_bytes.js").to_str().unwrap()],
    ))?;
    expect_eq("node CID", node.trim(), expected)
}

/// Runs a trial and says on stderr how long it took: `make test`'s time
/// budget is spent mostly here.
fn timed(name: &str, trial: impl FnOnce() -> Result<(), Failed>) -> Result<(), Failed> {
    let start = std::time::Instant::now();
    let result = trial();
    eprintln!("{name}: {:.1} s", start.elapsed().as_secs_f64());
    result
}

/// A check after the builds.
type Check = fn() -> Result<(), Failed>;

fn main() {
    let mut args = Arguments::from_args();
    // Builds first, then the checks that use them; cargo would serialise
    // concurrent builds on the shared target directory anyway.
    args.test_threads.get_or_insert(1);
    let mut trials: Vec<Trial> = workflows()
        .into_iter()
        .map(|path| {
            let name = stem(&path);
            let trial = format!("build/{name}");
            Trial::test(trial.clone(), move || timed(&trial, || build(&path, &wf_out().join(&name), None)))
                .with_ignored_flag(true)
        })
        .collect();
    // Each workflow with Node packages as a Wasm component and an HTTP
    // function too, into `target/wf-component/` (where the Node tests run
    // them through jco, wasmtime serve and jco serve).
    trials.extend(workflows().into_iter().map(|path| {
        let name = stem(&path);
        let trial = format!("component/{name}");
        Trial::test(trial.clone(), move || timed(&trial, || build_component(&path, &name))).with_ignored_flag(true)
    }));
    // The installed braid last: its fresh home changes the flags of the
    // operations' builds in the shared target directory, so a build after
    // it recompiles them once (a_new_workflow_reuses_... would see that).
    let checks: [(&str, Check); 12] = [
        ("a_trapping_workflow_is_built_for_the_js_tests", a_trapping_workflow_is_built_for_the_js_tests),
        (
            "an_operation_of_ones_own_is_scaffolded_added_and_used",
            an_operation_of_ones_own_is_scaffolded_added_and_used,
        ),
        ("a_crate_of_value_types_is_shared_by_two_operations", a_crate_of_value_types_is_shared_by_two_operations),
        ("the_books_worked_example_builds_and_runs", the_books_worked_example_builds_and_runs),
        ("standalone_crate_builds_away_from_the_repository", standalone_crate_builds_away_from_the_repository),
        ("a_rust_program_uses_a_generated_crate", a_rust_program_uses_a_generated_crate),
        (
            "the_image_workflows_run_natively_as_the_references_say",
            the_image_workflows_run_natively_as_the_references_say,
        ),
        ("a_new_workflow_reuses_the_operations_already_built", a_new_workflow_reuses_the_operations_already_built),
        ("a_second_build_elsewhere_gives_the_same_wasm", a_second_build_elsewhere_gives_the_same_wasm),
        ("wasm_simd_is_the_default_and_no_simd_leaves_none", wasm_simd_is_the_default_and_no_simd_leaves_none),
        ("the_http_function_keeps_a_small_memory_image", the_http_function_keeps_a_small_memory_image),
        ("the_installed_braid_works_outside_the_checkout", the_installed_braid_works_outside_the_checkout),
    ];
    trials.extend(
        checks.into_iter().map(|(name, check)| Trial::test(name, move || timed(name, check)).with_ignored_flag(true)),
    );
    libtest_mimic::run(&args, trials).exit();
}
