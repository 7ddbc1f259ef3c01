//! The `braid` binary as users call it: exit codes, diagnostics on stderr,
//! `--json` output, refused targets.

use std::process::Command;

fn braid(args: &[&str]) -> (i32, String, String) {
    braid_with(args, &[])
}

/// [`braid`] with more variables set.
fn braid_with(args: &[&str], vars: &[(&str, &std::path::Path)]) -> (i32, String, String) {
    // A registry of the tests' own, not the user's.
    let home = concat!(env!("CARGO_TARGET_TMPDIR"), "/braid-home");
    let mut command = Command::new(env!("CARGO_BIN_EXE_braid"));
    command.args(args).env("BRAID_HOME", home);
    for (name, value) in vars {
        command.env(name, value);
    }
    let out = command.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

fn workflow(name: &str) -> String {
    format!("{}/../../workflows/{name}.json", env!("CARGO_MANIFEST_DIR"))
}

fn temp(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("braid-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

#[test]
fn validate_exit_codes() {
    let (code, out, _) = braid(&["validate", &workflow("cidv1_from_bytes")]);
    assert_eq!(code, 0);
    assert!(
        out.contains("valid: workflow cidv1_from_bytes (1 segment(s)): Bytes -> Cid; builds for native,nostd,node,web,bundler, id"),
        "{out}"
    );
    assert!(out.contains("\nstreams: yes, its input may be given in chunks"), "{out}");
    let (_, out, _) = braid(&["validate", &workflow("dual_cid_of_text")]);
    assert!(out.contains("): String -> Vec<Cid>;"), "{out}");
    assert!(out.contains("\nstreams: no, its external input is String, and only a Bytes input"), "{out}");

    let bad = temp("bad.json", "{\n  \"name\": \"x\",\n  \"version\": \"0.1.0\",\n  \"segments\": [{ \"inputs\": [-1], \"sequence\": [{ \"operation\": \"op_nope\" }] }]\n}\n");
    let (code, _, err) = braid(&["validate", &bad]);
    assert_eq!(code, 1);
    assert!(err.contains("bad.json:4:62: error: unknown operation"), "{err}");
    assert!(err.contains("--> /segments/0/sequence/0/operation"), "{err}");
    assert!(err.contains("1 error(s)"), "{err}");

    let (code, _, err) = braid(&["validate", "/nonexistent/manifest.json"]);
    assert_eq!(code, 2, "{err}");
    let (code, _, _) = braid(&["validate"]);
    assert_eq!(code, 2, "usage error");
}

#[test]
fn validate_json_is_machine_readable() {
    let bad = temp("bad2.json", "{\"name\": \"x\", \"version\": \"0.1.0\", \"segments\": [], \"extra\": 1}");
    let (code, out, _) = braid(&["validate", "--json", &bad]);
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["valid"], false);
    let pointers: Vec<&str> =
        v["diagnostics"].as_array().unwrap().iter().map(|d| d["pointer"].as_str().unwrap()).collect();
    assert!(pointers.contains(&"/extra") && pointers.contains(&"/segments"), "{pointers:?}");
    let (code, out, _) = braid(&["validate", "--json", &workflow("salted_cid")]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["valid"], true);
    assert_eq!(v["targets"], serde_json::json!(["native", "nostd", "wasm"]));
    assert_eq!(v["signature"], "text: String, bytes: Bytes -> Cid", "salted_cid names its inputs");
    assert_eq!(v["build_targets"], serde_json::json!(["native", "nostd", "node", "web", "bundler"]));
}

#[test]
fn build_refuses_targets_an_operation_does_not_allow() {
    let out = std::env::temp_dir().join(format!("braid-cli-build-{}", std::process::id()));
    let (code, _, err) = braid(&["build", &workflow("cid_of_file"), "-o", out.to_str().unwrap(), "--targets", "node"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("target `node` is not possible for workflow cid_of_file: operation op_file has no wasm build"),
        "{err}"
    );
    assert!(!out.join("crate").exists(), "refused before building anything");
    let (code, _, err) = braid(&["build", &workflow("cid_of_file"), "-o", out.to_str().unwrap(), "--targets", "riscv"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown target `riscv`"), "{err}");
    // `wasm`, the word of operation manifests, means the three packages.
    let (code, _, err) = braid(&["build", &workflow("cid_of_file"), "-o", out.to_str().unwrap(), "--targets", "wasm"]);
    assert_eq!(code, 2);
    assert!(err.contains("target `node` is not possible for workflow cid_of_file"), "{err}");
}

/// `--operations`: the versions to build with, each of which the registry
/// must have (the service passes those its submission resolved).
#[test]
fn build_refuses_operation_versions_the_registry_lacks() {
    let out = std::env::temp_dir().join(format!("braid-cli-pinned-{}", std::process::id()));
    let unknown = "bafkr4iaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    let args = ["build", &workflow("cid_of_file"), "-o", out.to_str().unwrap(), "--operations", unknown];
    let (code, _, err) = braid(&args);
    assert_eq!(code, 2, "{err}");
    let home = concat!(env!("CARGO_TARGET_TMPDIR"), "/braid-home");
    assert!(err.contains(&format!("no operation version {unknown} in the registry in {home}")), "{err}");
    assert!(!out.join("crate").exists(), "refused before building anything");
    // One the workflow does not build on: named, with those it does.
    let (_, listed, _) = braid(&["ops", "--json"]);
    let listed: Vec<serde_json::Value> = serde_json::from_str(&listed).unwrap();
    let id_of =
        |name: &str| listed.iter().find(|o| o["name"] == name).unwrap()["version_id"].as_str().unwrap().to_string();
    let utf8 = id_of("op_utf8");
    let args = ["build", &workflow("cid_of_file"), "-o", out.to_str().unwrap(), "--operations", &utf8];
    let (code, _, err) = braid(&args);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!(
            "--operations names {utf8}, which workflow cid_of_file does not build on (it builds on "
        )),
        "{err}"
    );
    assert!(err.contains(&format!("op_cid {}", id_of("op_cid"))), "{err}");
    assert!(!out.join("crate").exists(), "refused before building anything");
}

#[test]
fn build_stream_says_why_a_workflow_cannot_stream() {
    let out = std::env::temp_dir().join(format!("braid-cli-stream-{}", std::process::id()));
    let (code, _, err) = braid(&["build", &workflow("salted_cid"), "-o", out.to_str().unwrap(), "--stream"]);
    assert_eq!(code, 2);
    assert!(
        err.contains(
            "workflow salted_cid cannot stream: it takes 2 external inputs, and streaming takes exactly one (Bytes). \
             Build it without --stream"
        ),
        "{err}"
    );
    assert!(!out.join("crate").exists(), "refused before building anything");
}

/// `--events json`: the end of a build is a typed JSON line on stdout,
/// the human error stays on stderr.
#[test]
fn build_events_json_ends_with_a_failed_event_on_stdout() {
    let out = std::env::temp_dir().join(format!("braid-cli-events-{}", std::process::id()));
    let out = out.to_str().unwrap();
    let args = ["build", &workflow("cid_of_file"), "-o", out, "--targets", "node", "--events", "json"];
    let (code, stdout, err) = braid(&args);
    assert_eq!(code, 2, "{err}");
    let lines: Vec<serde_json::Value> = stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 1, "{stdout}");
    assert_eq!(lines[0]["event"], "failed");
    assert!(lines[0]["error"].as_str().unwrap().contains("op_file has no wasm build"), "{stdout}");
    assert!(err.contains("error: target `node` is not possible"), "{err}");
    let bad = temp("bad_events.json", "{\"name\": \"x\", \"version\": \"0.1.0\", \"segments\": []}");
    let (code, stdout, err) = braid(&["build", &bad, "-o", out, "--events", "json"]);
    assert_eq!(code, 1);
    let end: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!((end["event"].as_str(), end["error"].as_str()), (Some("failed"), Some("invalid manifest")));
    assert!(err.contains("/segments"), "diagnostics on stderr: {err}");
    let (code, _, err) = braid(&["build", &bad, "-o", out, "--events", "xml"]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn generate_is_deterministic_and_never_overwrites_foreign_directories() {
    let base = std::env::temp_dir().join(format!("braid-cli-gen-{}", std::process::id()));
    let (a, b) = (base.join("a"), base.join("b"));
    for dir in [&a, &b] {
        let (code, _, err) = braid(&["generate", &workflow("dual_cid_of_text"), "-o", dir.to_str().unwrap()]);
        assert_eq!(code, 0, "{err}");
    }
    let op_cid = std::fs::read_dir(a.join("vendor"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .find(|n| n.starts_with("op_cid-"))
        .expect("op_cid is vendored");
    for file in ["Cargo.toml", "Cargo.lock", "src/lib.rs", &format!("vendor/{op_cid}/Cargo.toml")] {
        assert_eq!(std::fs::read(a.join(file)).unwrap(), std::fs::read(b.join(file)).unwrap(), "{file}");
    }
    // Generating again into the same directory works (it is ours) ...
    let (code, _, _) = braid(&["generate", &workflow("dual_cid_of_text"), "-o", a.to_str().unwrap()]);
    assert_eq!(code, 0);
    // ... but a directory with other content is left alone.
    let foreign = base.join("foreign");
    std::fs::create_dir_all(&foreign).unwrap();
    std::fs::write(foreign.join("notes.txt"), "mine").unwrap();
    let (code, _, err) = braid(&["generate", &workflow("dual_cid_of_text"), "-o", foreign.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("is not a crate generated by braid"), "{err}");
    assert_eq!(std::fs::read_to_string(foreign.join("notes.txt")).unwrap(), "mine");
    let _ = std::fs::remove_dir_all(&base);
}

#[test]
fn validate_reads_no_more_than_a_manifest_and_refuses_invalid_utf8() {
    // Read until memory ran out before; now at most one byte over the limit.
    let (code, _, err) = braid(&["validate", "/dev/zero"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("the manifest is too large"), "{err}");

    // Replaced with U+FFFD and exit 0 before; now a diagnostic at the byte.
    let dir = std::env::temp_dir().join(format!("braid-cli-utf8-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("latin1.json");
    let mut bytes = std::fs::read(workflow("cidv1_from_bytes")).unwrap();
    let at = bytes.windows(4).position(|w| w == b"CIDv").unwrap();
    bytes[at] = 0xe9; // Latin-1 "é"
    std::fs::write(&path, &bytes).unwrap();
    let (code, _, err) = braid(&["validate", path.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains(&format!("invalid byte at offset {at}")), "{err}");
    assert!(err.contains("found: byte 0xe9"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cache_shows_and_clean_removes_the_build_cache() {
    let base = std::env::temp_dir().join(format!("braid-cache-{}", std::process::id()));
    let target = base.join("target");
    // The user's cache directory, here the test's own: precompiled components live there.
    let cache = [("XDG_CACHE_HOME", base.join("user-cache"))];
    let vars: Vec<(&str, &std::path::Path)> = cache.iter().map(|(k, v)| (*k, v.as_path())).collect();
    let precompiled = base.join("user-cache/braid/precompiled");
    std::fs::create_dir_all(target.join("release")).unwrap();
    std::fs::create_dir_all(base.join("run/some-workflow")).unwrap();
    std::fs::create_dir_all(&precompiled).unwrap();
    std::fs::write(target.join("release/big"), vec![0u8; 3 << 20]).unwrap();
    std::fs::write(base.join("run/some-workflow/lib.rs"), vec![b'x'; 1 << 20]).unwrap();
    std::fs::write(precompiled.join("a.cwasm"), vec![0u8; 1 << 20]).unwrap();
    let target_arg = target.to_str().unwrap();
    let (code, out, err) = braid_with(&["cache", "--target-dir", target_arg], &vars);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(&format!("3.0 MiB  {}", target.display())), "{out}");
    assert!(out.contains(&format!("1.0 MiB  {}", base.join("run").display())), "{out}");
    assert!(out.contains(&format!("1.0 MiB  {}", precompiled.display())), "{out}");
    assert!(out.contains("5.0 MiB  in all"), "{out}");
    let (code, _, err) = braid_with(&["clean", "--target-dir", target_arg], &vars);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("freed 5.0 MiB"), "{err}");
    assert!(!target.exists() && !base.join("run").exists() && !precompiled.exists());
    let (code, out, _) = braid_with(&["cache", "--target-dir", target_arg], &vars);
    assert_eq!(code, 0);
    assert!(out.contains("0.0 MiB  in all"), "{out}");
    std::fs::remove_dir_all(&base).unwrap();
}

#[test]
fn completions_come_from_the_command_itself() {
    let (code, out, err) = braid(&["completions", "bash"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("_braid()") && out.contains("validate") && out.contains("--targets"), "{out}");
    let (code, _, err) = braid(&["completions", "tcsh"]);
    assert_eq!(code, 2);
    assert!(err.contains("invalid value 'tcsh'"), "{err}");
}

/// PATH without the directories that hold a wasm-opt: what a machine has
/// before `braid doctor --fix`.
fn path_without_wasm_opt() -> String {
    let path = std::env::var("PATH").unwrap_or_default();
    path.split(':').filter(|dir| !std::path::Path::new(dir).join("wasm-opt").exists()).collect::<Vec<_>>().join(":")
}

#[test]
fn doctor_says_what_is_missing_and_fix_installs_it_where_every_command_looks() {
    let tools = tempfile::tempdir().unwrap();
    let doctor = |fix: bool| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_braid"));
        cmd.arg("doctor").env("BRAID_TOOLS", tools.path()).env("PATH", path_without_wasm_opt());
        cmd.env("BRAID_HOME", concat!(env!("CARGO_TARGET_TMPDIR"), "/braid-home"));
        if fix {
            cmd.arg("--fix");
        }
        let out = cmd.output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, out, err) = doctor(false);
    assert_eq!(code, Some(1), "a missing tool is a failure: {out}{err}");
    let hint = format!("npm i --prefix {} binaryen@132.0.0", tools.path().display());
    assert!(out.lines().any(|l| l.starts_with("miss wasm-opt") && l.contains(&hint)), "{out}");
    assert!(err.contains("braid doctor --fix"), "{err}");

    let (code, out, err) = doctor(true);
    let installed = tools.path().join("node_modules/.bin/wasm-opt");
    assert!(err.contains("npm install"), "{err}");
    assert!(installed.is_file(), "--fix installs binaryen into the tools directory: {err}");
    assert!(out.contains(&format!("ok   wasm-opt               {}", installed.display())), "{out}");
    assert_eq!(code, Some(0), "everything else is installed where the tests run: {out}{err}");

    // `braid serve` checks the same at start, before it takes a job, and
    // finds the tools where doctor put them.
    let serve = |tools: &std::path::Path| {
        let data = tempfile::tempdir().unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_braid"))
            .args(["serve", "--addr", "127.0.0.1:0", "--api-key", "k", "--data"])
            .arg(data.path())
            .env("BRAID_TOOLS", tools)
            .env("PATH", path_without_wasm_opt())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut seen = String::new();
        let mut lines = std::io::BufRead::lines(std::io::BufReader::new(child.stderr.take().unwrap()));
        while !seen.contains("listening on") {
            match lines.next() {
                Some(Ok(line)) => seen.push_str(&(line + "\n")),
                _ => break,
            }
        }
        child.kill().unwrap();
        child.wait().unwrap();
        seen
    };
    let seen = serve(tools.path());
    assert!(seen.contains("listening on") && !seen.contains("wasm-opt"), "{seen}");
    let empty = tempfile::tempdir().unwrap();
    let seen = serve(empty.path());
    let warning = seen.find("builds that need what follows will fail").expect(&seen);
    assert!(warning < seen.find("listening on").unwrap(), "{seen}");
    assert!(seen.contains("  wasm-opt: ") && seen.contains("braid doctor --fix"), "{seen}");
}

/// An operation crate depending on a registered one by version (for its
/// value types) resolves in its own cargo once `braid ops deps` wrote the
/// registry copies into its `.cargo/config.toml`: before, cargo looks for
/// op_photo_proof on crates.io and fails. A config of the user's own is
/// left alone, and the lines it needs are printed.
#[test]
fn ops_deps_makes_registered_dependencies_resolve_in_the_crates_own_cargo() {
    let tmp = tempfile::tempdir().unwrap();
    let op = tmp.path().join("op_mine");
    let op_dir = op.to_str().unwrap();
    let (code, _, err) = braid(&["new", "op", "op_mine", "-o", op_dir]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains(&format!("braid ops deps {op_dir}")), "new op says how: {err}");
    let cargo_toml = op.join("Cargo.toml");
    let text = std::fs::read_to_string(&cargo_toml).unwrap();
    let text = text.replacen(
        "[dependencies]\n",
        "[dependencies]\nop_photo_proof = { version = \"0.1\", default-features = false }\n",
        1,
    );
    std::fs::write(&cargo_toml, text).unwrap();
    // From the crate's directory, as `cargo test` there (cargo reads
    // `.cargo/config.toml` from where it runs).
    let metadata =
        || Command::new("cargo").args(["metadata", "--format-version", "1"]).current_dir(&op).output().unwrap();
    let before = metadata();
    assert!(!before.status.success(), "op_photo_proof resolved without braid ops deps");
    assert!(
        String::from_utf8_lossy(&before.stderr).contains("op_photo_proof"),
        "{}",
        String::from_utf8_lossy(&before.stderr)
    );

    let (code, out, err) = braid(&["ops", "deps", op_dir]);
    assert_eq!(code, 0, "{err}");
    // op_photo_proof, and op_image_decode, on which it depends.
    let names: Vec<&str> = out.lines().filter_map(|l| l.split(' ').next()).collect();
    assert_eq!(names, ["op_image_decode", "op_photo_proof"], "{out}");
    assert!(err.contains("wrote"), "{err}");
    let after = metadata();
    assert!(after.status.success(), "{}", String::from_utf8_lossy(&after.stderr));
    let meta: serde_json::Value = serde_json::from_slice(&after.stdout).unwrap();
    let photo = meta["packages"].as_array().unwrap().iter().find(|p| p["name"] == "op_photo_proof").unwrap();
    assert!(
        photo["manifest_path"].as_str().unwrap().contains("/registry/sources/"),
        "the registry's copy: {}",
        photo["manifest_path"]
    );

    // A config of one's own: untouched, and what it needs is printed.
    let config = op.join(".cargo/config.toml");
    std::fs::write(&config, "[build]\njobs = 1\n").unwrap();
    let (code, out, err) = braid(&["ops", "deps", op_dir]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read_to_string(&config).unwrap(), "[build]\njobs = 1\n");
    assert!(err.contains("was not written by braid"), "{err}");
    assert!(out.contains("[patch.crates-io]") && out.contains("op_photo_proof = { path = "), "{out}");
}
