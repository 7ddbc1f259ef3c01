//! What subcommands share: reading and validating a manifest with
//! compiler-style diagnostics, the "invalid" outcome (exit 1), and writing
//! to stdout.

use std::path::Path;

use anyhow::Context as _;
use braid::diagnostic::Diagnostic;
use braid::manifest::{validate_bytes, Workflow, MAX_MANIFEST_BYTES};
use braid::registry::Registry;

/// The registry in `$BRAID_HOME` (see [`braid::registry::default_home`]).
pub fn registry() -> anyhow::Result<Registry> {
    let home = braid::registry::default_home();
    Registry::open(&home).with_context(|| format!("cannot open the operation registry in {}", home.display()))
}

/// Where `braid` looks for wasm-opt besides PATH: the tools directory
/// ([`braid::registry::tools_dir`]), where `braid doctor --fix` installs it.
pub fn tool_dirs() -> Vec<std::path::PathBuf> {
    vec![braid::registry::tools_dir().join("node_modules/.bin")]
}

/// Whether builds deny warnings: `BRAID_DENY_WARNINGS=1` (the tests set
/// it). Every command that compiles Wasm reads it alike: cargo keeps one
/// artifact per crate whatever its flags, so a build with `-D warnings`
/// and one without, sharing a target directory, would recompile each
/// other's dependencies every time.
pub fn deny_warnings() -> bool {
    std::env::var_os("BRAID_DENY_WARNINGS").is_some_and(|v| v == "1")
}

/// A manifest that failed validation: diagnostics were printed; exit 1.
#[derive(Debug, thiserror::Error)]
#[error("invalid manifest")]
pub struct Invalid;

/// Reads and validates a manifest, printing diagnostics like a compiler.
pub fn load(path: &Path, registry: &Registry) -> anyhow::Result<Workflow> {
    let bytes = read_manifest(path)?;
    validate_bytes(&bytes, registry).map_err(|diagnostics| {
        print_diagnostics(path, &bytes, &diagnostics);
        anyhow::Error::new(Invalid)
    })
}

/// Prints diagnostics on stderr, each with its line and source excerpt.
pub fn print_diagnostics(path: &Path, bytes: &[u8], diagnostics: &[Diagnostic]) {
    let shown = path.display().to_string();
    for d in diagnostics {
        eprint!("{}", d.render(&shown, std::str::from_utf8(bytes).ok()));
    }
    eprintln!("{shown}: {} error(s)", diagnostics.len());
}

/// Reads a manifest file: at most one byte more than a manifest may have
/// (so `/dev/zero` or a huge file costs nothing), left for the validator to
/// judge (size, UTF-8), like any other manifest problem.
pub fn read_manifest(path: &Path) -> anyhow::Result<Vec<u8>> {
    use std::io::Read as _;
    let file = std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut bytes = Vec::new();
    file.take(MAX_MANIFEST_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read {}", path.display()))?;
    Ok(bytes)
}

/// Writes `text` to stdout; a closed pipe (`braid ops | head`) is not an error.
pub fn emit(text: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}
