//! End-to-end checks of `braid build`, one named trial each (libtest-mimic):
//! every example workflow built for every target its operations allow with
//! warnings denied (`build/<workflow>`, into `target/wf/`, where the Node
//! tests find them), then what a user of the output relies on: the crate
//! builds away from the repository, a Rust program can depend on it, a new
//! workflow reuses the operations already compiled, and a second build
//! elsewhere gives the same `.wasm` with no absolute path in it.
//!
//! Slow (real cargo and wasm-bindgen builds), so ignored by a plain
//! `cargo test`; `make test` runs `cargo test -p braid-cli --test e2e --
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

fn braid() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_braid"));
    command.env("BRAID_DENY_WARNINGS", "1").env("BRAID_TARGET_DIR", braid_target_dir());
    command
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

/// `target/wf/<name>`, built now if it is not there yet.
fn built(name: &str) -> Result<PathBuf, Failed> {
    let out = wf_out().join(name);
    if !out.join("report.json").is_file() {
        build(&root().join("workflows").join(format!("{name}.json")), &out, None)?;
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
    run(Command::new("cargo")
        .args(["build", "--quiet", "--offline", "--target-dir"])
        .arg(braid_target_dir())
        .current_dir(&copy))
}

/// A Rust program depending on a generated crate (`tests/consumer` of the
/// `braid` crate), its lock started from the generated crate's.
fn a_rust_program_uses_a_generated_crate() -> Result<(), Failed> {
    let out = built("salted_cid")?;
    let consumer = root().join("generator/braid/tests/consumer");
    std::fs::copy(out.join("crate/Cargo.lock"), consumer.join("Cargo.lock"))?;
    run(Command::new("cargo")
        .args(["test", "--quiet", "--manifest-path"])
        .arg(consumer.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(braid_target_dir()))
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

/// Another output directory and another cargo target directory (so another
/// staging directory) give the same `.wasm`, and it names no local path.
fn a_second_build_elsewhere_gives_the_same_wasm() -> Result<(), Failed> {
    let first = built("cidv1_from_bytes")?;
    let again = root().join("target/wf-again");
    let mut command = braid();
    command
        .env("BRAID_TARGET_DIR", root().join("target/braid-again"))
        .args(["build", "workflows/cidv1_from_bytes.json", "--targets", "node", "-o"])
        .arg(&again)
        .current_dir(root());
    run(&mut command)?;
    let wasm = "pkg/node/wf_cidv1_from_bytes_bg.wasm";
    let (a, b) = (std::fs::read(first.join(wasm))?, std::fs::read(again.join(wasm))?);
    if a != b {
        return Err(format!("{} and {} differ", first.join(wasm).display(), again.join(wasm).display()).into());
    }
    no_absolute_path(&again.join(wasm), &b)
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
            Trial::test(format!("build/{name}"), move || build(&path, &wf_out().join(&name), None))
                .with_ignored_flag(true)
        })
        .collect();
    let checks: [(&str, Check); 4] = [
        ("standalone_crate_builds_away_from_the_repository", standalone_crate_builds_away_from_the_repository),
        ("a_rust_program_uses_a_generated_crate", a_rust_program_uses_a_generated_crate),
        ("a_new_workflow_reuses_the_operations_already_built", a_new_workflow_reuses_the_operations_already_built),
        ("a_second_build_elsewhere_gives_the_same_wasm", a_second_build_elsewhere_gives_the_same_wasm),
    ];
    trials.extend(checks.into_iter().map(|(name, check)| Trial::test(name, check).with_ignored_flag(true)));
    libtest_mimic::run(&args, trials).exit();
}
