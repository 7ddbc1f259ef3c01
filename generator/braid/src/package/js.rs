//! Building a crate as the package of one JS target: `cargo rustc
//! --crate-type cdylib` for `wasm32-unknown-unknown`, `wasm-bindgen` for
//! the target, Braid's touches to its glue (`glue.rs`), `wasm-opt`
//! (binaryen >= 116; Debian's 108 corrupts wasm-bindgen output), and a
//! `package.json` in wasm-pack's layout. Paths are remapped so the `.wasm`
//! holds no absolute path of this machine.
//!
//! The crate-type is given on the command line rather than in Cargo.toml so
//! the same crate also builds for targets without `cdylib` (no_std ones)
//! without a warning.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

use super::api::{api, API_JS};
use super::fast_run::{fast_run, FAST_RUN_HELPERS};
use super::glue::{bind_support, raw_exports_unknown, strict, undeclared};
use super::traps::{guard_traps, schedules_reset, GUARD};
use crate::fsutil::{self, FsError};
use crate::process::{self, ProcessError};
use crate::target::{JsTarget, WASM_TRIPLE};

/// Braid's own JavaScript that the glue edits put in a package's glue, by file.
const BRAIDS_JAVASCRIPT: [(&str, &str); 3] =
    [("glue/api.js", API_JS), ("glue/fast-run.js", FAST_RUN_HELPERS), ("glue/traps.js", GUARD)];

/// What wasm-bindgen calls `target`.
fn bindgen_target(target: JsTarget) -> &'static str {
    match target {
        JsTarget::Node => "nodejs",
        JsTarget::Web => "web",
        JsTarget::Bundler => "bundler",
    }
}

/// Absolute paths that must not end up in the `.wasm`: cargo's home, the
/// Braid repository (when building its operations alone) and, when building
/// a generated crate, its directory. rustc applies the last matching
/// prefix, so the most specific comes last.
pub fn remaps(braid_root: Option<&Path>, crate_dir: Option<&Path>) -> Vec<(PathBuf, String)> {
    let mut remap = Vec::new();
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")));
    if let Some(home) = cargo_home {
        remap.push((home, "/cargo".to_string()));
    }
    if let Some(root) = braid_root {
        remap.push((root.to_path_buf(), "/braid".to_string()));
    }
    if let Some(dir) = crate_dir {
        remap.push((dir.canonicalize().unwrap_or(dir.to_path_buf()), "/wf".to_string()));
    }
    remap
}

/// Why a package could not be built.
#[derive(Debug, thiserror::Error)]
pub enum PackageError {
    #[error("`{tool}` is not usable: {problem}. {hint}")]
    Tool { tool: String, problem: String, hint: String },
    #[error(transparent)]
    Process(#[from] ProcessError),
    #[error(transparent)]
    Fs(#[from] FsError),
    #[error("{name} cannot run in Wasm (targets: {targets}); it has no standalone npm package")]
    NotWasm { name: String, targets: String },
    #[error("{}: wasm-bindgen's glue is not in the form Braid wraps ({what} was not found; is `wasm-bindgen` {WASM_BINDGEN_VERSION}?)", path.display())]
    GlueForm { path: PathBuf, what: &'static str },
    #[error("{}: the glue schedules a reset of its own (a crate calls `wasm_bindgen::handler::schedule_reinit`), which would not wait for a running call of the module; Braid's packages reset only after a trap, or when `__wbg_reset_state()` is called: the package is not shipped", path.display())]
    SchedulesReset { path: PathBuf },
    #[error("{}: Braid's {file} takes `{name}` from wasm-bindgen's glue, which does not declare it (is `wasm-bindgen` {WASM_BINDGEN_VERSION}?); the package is not shipped", path.display())]
    GlueTakes { path: PathBuf, file: &'static str, name: String },
}

/// The external tools a Wasm build needs, checked once.
#[derive(Debug, Clone)]
pub struct Toolchain {
    pub wasm_bindgen: PathBuf,
    /// `None` when the build skips wasm-opt (`braid build --no-opt`).
    pub wasm_opt: Option<PathBuf>,
}

/// The wasm-bindgen CLI must equal the `wasm-bindgen` crate pin.
pub const WASM_BINDGEN_VERSION: &str = "0.2.130";
/// The npm `binaryen` release whose wasm-opt Braid is tested with.
pub const WASM_OPT_NPM_VERSION: &str = "132.0.0";

/// Oldest wasm-opt known to keep wasm-bindgen 0.2.130 output loadable.
pub const MIN_WASM_OPT_VERSION: u32 = 116;

impl Toolchain {
    /// Finds the tools on PATH (wasm-opt also in `extra_bin`, e.g.
    /// `$BRAID_HOME/tools/node_modules/.bin`) and checks their versions;
    /// wasm-opt only if `optimize`.
    pub fn detect(extra_bin: &[PathBuf], optimize: bool) -> Result<Self, PackageError> {
        let wasm_bindgen = Self::find_wasm_bindgen()?;
        let wasm_opt = if optimize { Some(Self::find_wasm_opt(extra_bin)?) } else { None };
        Ok(Self { wasm_bindgen, wasm_opt })
    }

    /// wasm-bindgen on PATH, at the version the crates pin.
    pub fn find_wasm_bindgen() -> Result<PathBuf, PackageError> {
        let install = format!("cargo install wasm-bindgen-cli --version {WASM_BINDGEN_VERSION} --locked");
        let wasm_bindgen = process::which("wasm-bindgen", &[]).ok_or_else(|| PackageError::Tool {
            tool: "wasm-bindgen".into(),
            problem: "not found on PATH".into(),
            hint: install.clone(),
        })?;
        let version = tool_version(&wasm_bindgen)?;
        if !version.contains(WASM_BINDGEN_VERSION) {
            return Err(PackageError::Tool {
                tool: "wasm-bindgen".into(),
                problem: format!("version is `{version}`, the crates pin {WASM_BINDGEN_VERSION}"),
                hint: install,
            });
        }
        Ok(wasm_bindgen)
    }

    /// wasm-opt in `extra_bin` (the first is where the hint installs it:
    /// `<prefix>/node_modules/.bin`) or on PATH, recent enough.
    pub fn find_wasm_opt(extra_bin: &[PathBuf]) -> Result<PathBuf, PackageError> {
        let install = match extra_bin.first().and_then(|bin| bin.parent()).and_then(Path::parent) {
            Some(prefix) => format!("npm i --prefix {} binaryen@{WASM_OPT_NPM_VERSION}", prefix.display()),
            None => format!("npm i -g binaryen@{WASM_OPT_NPM_VERSION}"),
        };
        let wasm_opt = process::which("wasm-opt", extra_bin).ok_or_else(|| PackageError::Tool {
            tool: "wasm-opt".into(),
            problem: "not found".into(),
            hint: install.clone(),
        })?;
        let version = tool_version(&wasm_opt)?;
        let number = version
            .split(|c: char| !c.is_ascii_digit())
            .find(|s| !s.is_empty())
            .and_then(|s| s.parse::<u32>().ok())
            .unwrap_or(0);
        if number < MIN_WASM_OPT_VERSION {
            return Err(PackageError::Tool {
                tool: wasm_opt.display().to_string(),
                problem: format!(
                    "version is `{version}`; versions before {MIN_WASM_OPT_VERSION} corrupt wasm-bindgen output"
                ),
                hint: install,
            });
        }
        Ok(wasm_opt)
    }
}

/// Looks for `name` first in `extra` directories, then on PATH.
fn tool_version(tool: &Path) -> Result<String, PackageError> {
    let out = Command::new(tool).arg("--version").output().map_err(fsutil::at(tool))?;
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// What to package.
#[derive(Debug, Clone)]
pub struct PackageSpec {
    /// `Cargo.toml` of the workspace (or crate) that holds the package.
    pub manifest_path: PathBuf,
    /// The cargo package, e.g. `op_multihash`; also the npm name.
    pub package: String,
    pub version: String,
    pub description: String,
    pub license: String,
    /// Cargo features to enable (e.g. `wasm`).
    pub features: Vec<String>,
    /// With the package's default features (`std`); without them (and
    /// with braid-support's `panic-trap` among `features`), a module links
    /// no `std`: Braid packages a workflow so when its operations all allow
    /// `no_std`.
    pub std: bool,
    /// Cargo's target directory, shared between builds for warm builds.
    pub target_dir: PathBuf,
    /// Path prefixes to hide in the binary (e.g. the repo root, the cargo
    /// registry), each mapped to a fixed name.
    pub remap: Vec<(PathBuf, String)>,
    /// Compile with `-D warnings`.
    pub deny_warnings: bool,
    /// Compile the Wasm packages with Wasm SIMD (`simd128`): on by default
    /// (see [`SIMD_FLAG`]); off (`braid build --no-simd`) for engines
    /// without it.
    pub simd: bool,
    /// Run cargo in this sandbox (see [`crate::build::Options::sandbox`]).
    pub sandbox: Option<crate::sandbox::Sandbox>,
    /// Compile through this cache (see [`crate::build::Options::compile_cache`]).
    pub compile_cache: Option<crate::compile_cache::CompileCache>,
    /// The input limit a workflow's HTTP function is compiled with (see
    /// [`HTTP_INPUT_LIMIT_ENV`]); `None`: its default, 16 MiB.
    pub http_input_limit: Option<u64>,
    /// The package's own crate compiled at `opt-level = 3` too, where the
    /// generated crate's profile compiles it for size (`s`, for the npm
    /// packages' glue): the operations' generic and inline code is compiled
    /// in the crate that calls it, at that crate's level, and with LTO the
    /// whole module is probably optimised again at the level of the crate
    /// that links it (which of the two weighs more is not measured apart).
    /// On for components and HTTP functions, which run on servers:
    /// photo_proof's hand-written HTTP function ran 14 % slower with its own
    /// crate at `s` (the contributor guide's benchmarks).
    pub speed: bool,
}

/// How a workflow crate's `http` feature is told its input limit, in
/// bytes, when compiled (`option_env!`, read by braid-support's
/// `http::input_limit`): set by [`compile_module`] from
/// [`PackageSpec::http_input_limit`], and removed when that is `None`, so
/// the caller's environment never changes a build.
pub const HTTP_INPUT_LIMIT_ENV: &str = "BRAID_HTTP_INPUT_LIMIT";

impl PackageSpec {
    /// An operation of the workspace at `root` alone, as an npm package
    /// (its `wasm` feature, with the support crate's allocator).
    pub fn operation(root: &Path, op: &crate::registry::RegisteredOperation) -> Result<Self, PackageError> {
        let m = &op.manifest;
        if !m.supports(crate::schema::Platform::Wasm) {
            return Err(PackageError::NotWasm { name: m.name.clone(), targets: crate::join(&m.targets, ", ") });
        }
        Ok(Self {
            manifest_path: root.join("Cargo.toml"),
            package: m.name.clone(),
            version: m.version.clone(),
            description: m.description.clone(),
            license: m.license.clone(),
            features: vec!["wasm".into(), "braid-support/wasm-allocator".into()],
            std: true,
            target_dir: root.join("target"),
            remap: remaps(Some(root), None),
            deny_warnings: false,
            simd: true,
            sandbox: None,
            compile_cache: None,
            http_input_limit: None,
            speed: false,
        })
    }

    /// Operation `op` of the workflow crate `self` packages, alone, as an
    /// npm package built in that crate's workspace (its vendored copy, its
    /// lockfile, its sandbox): what `braid build --targets steps` makes of
    /// each operation. Its `wasm` feature (named with the operation: the
    /// vendored copy is a member of that workspace, as a path dependency
    /// under its root) and its default features, which compile every
    /// configuration value in.
    pub fn step(&self, op: &crate::registry::RegisteredOperation) -> Self {
        let m = &op.manifest;
        Self {
            package: m.name.clone(),
            version: m.version.clone(),
            description: m.description.clone(),
            license: m.license.clone(),
            features: vec![format!("{}/wasm", m.name), "braid-support/wasm-allocator".into()],
            std: true,
            http_input_limit: None,
            speed: false,
            ..self.clone()
        }
    }
}

/// What was built.
#[derive(Debug, Clone)]
pub struct Package {
    pub dir: PathBuf,
    pub wasm: PathBuf,
    pub wasm_bytes: u64,
}

/// The flag that lets LLVM and the crates use Wasm's 128-bit SIMD
/// (`simd128`) in a module, on by default: every engine Braid's packages
/// target runs it (Node 18+, Chrome 96+, Firefox 90+, Safari 16.4+), and
/// crates with SIMD code for Wasm switch to it (sha2's SHA-256, and
/// blake3's, whose `wasm32_simd` feature `op_multihash` turns on with it).
/// An engine without SIMD refuses the whole module, hence `--no-simd`,
/// which leaves no SIMD instruction in it.
pub const SIMD_FLAG: &str = "-Ctarget-feature=+simd128";

/// Compiles `spec` to Wasm once (release, [`WASM_TRIPLE`]), for wasm-bindgen.
pub fn compile(spec: &PackageSpec) -> Result<PathBuf, PackageError> {
    compile_module(spec, false)
}

/// Compiles `spec` as a `cdylib` for [`WASM_TRIPLE`]: the core module of
/// an npm package or of a component, with [`SIMD_FLAG`] unless `spec.simd`
/// is off (wasmtime and jco's Node run SIMD too).
/// `strip` drops the symbols a linked module does not need (wasm-bindgen,
/// which needs its own sections, strips them later).
pub fn compile_module(spec: &PackageSpec, strip: bool) -> Result<PathBuf, PackageError> {
    let rustflags = rustflags(spec);
    let mut cmd = process::cargo();
    cmd.args(["rustc", "--quiet", "--lib", "--release", "--target", WASM_TRIPLE, "--crate-type", "cdylib"])
        // Unwinding buys nothing in these packages and costs size; Braid's own
        // workspace profile unwinds (for the service), so say it here.
        .args(["--config", "profile.release.panic=\"abort\""])
        .args(if strip { &["--config", "profile.release.strip=\"symbols\""][..] } else { &[] })
        .arg("--manifest-path")
        .arg(&spec.manifest_path)
        .args(["-p", &spec.package])
        .arg("--target-dir")
        .arg(&spec.target_dir)
        // Separated by 0x1f so paths with spaces survive.
        .env("CARGO_ENCODED_RUSTFLAGS", rustflags.join("\u{1f}"))
        .env_remove("RUSTFLAGS");
    match spec.http_input_limit {
        Some(bytes) => cmd.env(HTTP_INPUT_LIMIT_ENV, bytes.to_string()),
        None => cmd.env_remove(HTTP_INPUT_LIMIT_ENV),
    };
    if spec.speed {
        cmd.arg("--config").arg(format!("profile.release.package.{}.opt-level=3", spec.package));
    }
    if !spec.std {
        cmd.arg("--no-default-features");
    }
    if !spec.features.is_empty() {
        cmd.arg("--features").arg(spec.features.join(","));
    }
    if let Some(cache) = &spec.compile_cache {
        cache.apply(&mut cmd);
    }
    crate::sandbox::Sandbox::output_in(spec.sandbox.as_ref(), &mut cmd)?;
    let lib = crate::schema::lib_name(&spec.package);
    Ok(spec.target_dir.join(WASM_TRIPLE).join("release").join(format!("{lib}.wasm")))
}

/// The flags `spec` is compiled with: its paths remapped, warnings denied
/// if asked, Wasm SIMD unless turned off.
fn rustflags(spec: &PackageSpec) -> Vec<String> {
    let mut flags: Vec<String> =
        spec.remap.iter().map(|(from, to)| format!("--remap-path-prefix={}={to}", from.display())).collect();
    if spec.deny_warnings {
        flags.push("-Dwarnings".into());
    }
    if spec.simd {
        flags.push(SIMD_FLAG.into());
    }
    flags
}

/// Binds, optimises and packages the compiled `wasm` for `target` in `out_dir`
/// (which is emptied first).
pub fn package(
    spec: &PackageSpec,
    wasm: &Path,
    target: JsTarget,
    out_dir: &Path,
    tools: &Toolchain,
) -> Result<Package, PackageError> {
    if out_dir.exists() {
        std::fs::remove_dir_all(out_dir).map_err(fsutil::at(out_dir))?;
    }
    std::fs::create_dir_all(out_dir).map_err(fsutil::at(out_dir))?;
    let name = crate::schema::lib_name(&spec.package);
    let mut bindgen = Command::new(&tools.wasm_bindgen);
    bindgen.arg(wasm).arg("--out-dir").arg(out_dir).args(["--out-name", &name, "--target", bindgen_target(target)]);
    // A fresh instance after a trap (wasm-bindgen cannot re-instantiate
    // a bundler package: its Wasm is an ES module import).
    if target != JsTarget::Bundler {
        bindgen.arg("--experimental-reset-state-function");
    }
    process::output(&mut bindgen)?;
    for dts in [format!("{name}.d.ts"), format!("{name}_bg.wasm.d.ts")] {
        let path = out_dir.join(dts);
        if let Ok(text) = std::fs::read_to_string(&path) {
            if let Some(typed) = raw_exports_unknown(&text) {
                std::fs::write(&path, typed).map_err(fsutil::at(&path))?;
            }
        }
    }
    // wasm-bindgen's glue proper: the package's entry, or a bundler
    // package's `_bg.js`, beside an entry that imports the Wasm and hands
    // it to the glue.
    let proper = if target == JsTarget::Bundler { format!("{name}_bg.js") } else { format!("{name}.js") };
    let path = out_dir.join(&proper);
    let original = fsutil::read_to_string(&path)?;
    let form = |what| PackageError::GlueForm { path: path.clone(), what };
    let (mut text, typed) = fast_run(&original).map_err(form)?;
    // A workflow's API, Braid's own: see `api`.
    let exported = match api(&text, &typed, target != JsTarget::Node).map_err(form)? {
        Some(with_api) => {
            text = with_api.glue;
            with_api.exports
        }
        None => Vec::new(),
    };
    if schedules_reset(&text) {
        return Err(PackageError::SchedulesReset { path });
    }
    text = guard_traps(&text).map_err(form)?;
    // After the edits, as the fast path's readers name braid-support's
    // namespace too; before `'use strict'`, which must stay the glue's
    // first statement.
    text = bind_support(&text);
    if target == JsTarget::Node {
        text = strict(&text);
    }
    check_takes(&path, &text)?;
    if text != original {
        fsutil::write(&path, text.as_bytes())?;
    }
    // A bundler package's entry exports what its glue does of Braid's API.
    if target == JsTarget::Bundler && !exported.is_empty() {
        let entry = out_dir.join(format!("{name}.js"));
        let mut text = fsutil::read_to_string(&entry)?;
        text.push_str(&format!("export {{ {} }} from \"./{proper}\";\n", exported.join(", ")));
        fsutil::write(&entry, text.as_bytes())?;
    }
    // An operation's own JS snippets (braid-support's are namespaces in
    // the glue) are ES modules, which a Node glue `require`s as they are:
    // Node 20.19 and later load them when their directory says so.
    let snippets = out_dir.join("snippets");
    if target == JsTarget::Node && snippets.is_dir() {
        fsutil::write(&snippets.join("package.json"), b"{ \"type\": \"module\" }\n")?;
    }
    let bg = out_dir.join(format!("{name}_bg.wasm"));
    if let Some(wasm_opt) = &tools.wasm_opt {
        optimize(&bg, &spec.target_dir.join("braid-wasm-opt"), wasm_opt)?;
    }
    let mut files: Vec<String> = std::fs::read_dir(out_dir)
        .map_err(fsutil::at(out_dir))?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|f| f != ".gitignore")
        .collect();
    files.sort();
    let _ = std::fs::remove_file(out_dir.join(".gitignore"));
    let js = format!("{name}.js");
    let types = format!("{name}.d.ts");
    let mut pkg = json!({
        "name": spec.package,
        "version": spec.version,
        "description": spec.description,
        "files": files,
        "main": js,
        "types": types,
    });
    if !spec.license.is_empty() {
        pkg["license"] = spec.license.clone().into();
    }
    match target {
        JsTarget::Node => {}
        JsTarget::Web => {
            pkg["type"] = "module".into();
            pkg["module"] = js.clone().into();
        }
        JsTarget::Bundler => {
            pkg["type"] = "module".into();
            pkg["module"] = js.clone().into();
            pkg["sideEffects"] = json!([format!("./{js}"), "./snippets/*"]);
        }
    }
    let path = out_dir.join("package.json");
    let text = serde_json::to_string_pretty(&pkg).expect("json serializes") + "\n";
    std::fs::write(&path, text).map_err(fsutil::at(&path))?;
    let wasm_bytes = std::fs::metadata(&bg).map_err(fsutil::at(&bg))?.len();
    Ok(Package { dir: out_dir.to_path_buf(), wasm: bg, wasm_bytes })
}

/// Every file of Braid's JavaScript in `glue` finds what it takes from the
/// glue's scope there (see [`undeclared`]).
fn check_takes(path: &Path, glue: &str) -> Result<(), PackageError> {
    for (file, source) in BRAIDS_JAVASCRIPT {
        if let Some(name) = glue.contains(source).then(|| undeclared(source, glue)).flatten() {
            return Err(PackageError::GlueTakes { path: path.to_path_buf(), file, name: name.to_string() });
        }
    }
    Ok(())
}

/// wasm-opt's flags: speed, with the features Rust 1.95 enables by default
/// on wasm32 plus SIMD; and without the custom sections no engine reads
/// (the toolchain's `producers`, the `target_features` wasm-opt was just
/// told): about 270 bytes.
const WASM_OPT_FLAGS: &[&str] = &[
    "-O3",
    "--strip-producers",
    "--strip-target-features",
    "--enable-simd",
    "--enable-bulk-memory",
    "--enable-nontrapping-float-to-int",
    "--enable-sign-ext",
    "--enable-mutable-globals",
    "--enable-reference-types",
    "--enable-multivalue",
];

/// Runs wasm-opt on `wasm` in place, through a cache keyed by the input
/// bytes and the flags: the three JS targets bind the same module, and a
/// rebuild of an unchanged workflow skips wasm-opt altogether.
fn optimize(wasm: &Path, cache: &Path, wasm_opt: &Path) -> Result<(), PackageError> {
    let mut key = fsutil::read(wasm)?;
    key.extend_from_slice(WASM_OPT_FLAGS.join(" ").as_bytes());
    key.extend_from_slice(wasm_opt.display().to_string().as_bytes());
    let cached = cache.join(format!("{}.wasm", braid_schema::content_id(&key)));
    if let Ok(bytes) = std::fs::read(&cached) {
        return Ok(fsutil::write(wasm, &bytes)?);
    }
    process::output(Command::new(wasm_opt).arg(wasm).arg("-o").arg(wasm).args(WASM_OPT_FLAGS))?;
    // Written then renamed: a concurrent build never reads half a file.
    fsutil::write_if_changed(&cached, &fsutil::read(wasm)?)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_file_of_braids_javascript_says_what_it_takes_from_the_glue() {
        for (file, source) in BRAIDS_JAVASCRIPT {
            // In a glue declaring `wasm` alone, refused if it takes more.
            let glue = format!("let wasm;\n{source}");
            let refused = matches!(check_takes(Path::new("wf.js"), &glue), Err(PackageError::GlueTakes { file: f, .. }) if f == file);
            assert_eq!(refused, undeclared(source, &glue).is_some(), "{file}");
        }
        // glue/api.js takes nothing; the others, what the glue declares.
        assert_eq!(undeclared(API_JS, ""), None);
        assert!(undeclared(FAST_RUN_HELPERS, "let wasm;\n").is_some() && undeclared(GUARD, "let wasm;\n").is_some());
    }
}
