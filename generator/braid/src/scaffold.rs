//! `braid new op`: a new operation crate from `templates/op/`, which builds
//! (native, `no_std`, wasm32) and passes its test at once, anywhere. Its
//! dependencies on Braid's runtime crates resolve through a `[patch]` in
//! `.cargo/config.toml` pointing at copies installed under the registry's
//! home, so it needs no checkout of Braid; `braid ops deps` adds the
//! registered crates it depends on by version ([`link_registered`]), so its
//! own `cargo test` finds them too.

use std::path::{Path, PathBuf};

use handlebars::Handlebars;
use serde::Serialize;

use crate::fsutil::{self, FsError};
use crate::registry::{self, Registry, RegistryError};
use crate::vendor::{self, VendorError};

/// The files of a new operation crate, each with its template under
/// `templates/` ([`crate::sources`]).
const TEMPLATES: &[(&str, &str)] = &[
    ("Cargo.toml", "op/Cargo.toml.hbs"),
    ("src/lib.rs", "op/src/lib.rs.hbs"),
    ("README.md", "op/README.md.hbs"),
    (".cargo/config.toml", CONFIG),
];

#[derive(Debug, thiserror::Error)]
pub enum ScaffoldError {
    #[error(
        "`{0}` is not a name for an operation: a lower-case ASCII letter, then lower-case letters, digits or `_`, \
         at most 64 (e.g. op_resize)"
    )]
    Name(String),
    #[error("{0} exists and is not empty; choose a new directory")]
    NotEmpty(PathBuf),
    #[error(transparent)]
    Fs(#[from] FsError),
    #[error(transparent)]
    Vendor(#[from] VendorError),
    #[error("rendering {file}: {message}")]
    Render { file: String, message: String },
    #[error(transparent)]
    Registry(#[from] RegistryError),
    #[error("{path}: {reason}")]
    Manifest { path: PathBuf, reason: String },
}

/// The first line of the `.cargo/config.toml` Braid writes, by which it
/// knows the file is its own to rewrite.
const CONFIG_MARKER: &str = "# Written by `braid new op`";

/// A registered crate patched in by path.
#[derive(Debug, Clone, Serialize)]
pub struct Patch {
    pub name: String,
    pub version: String,
    /// As a TOML string.
    #[serde(rename = "path")]
    path_toml: String,
    #[serde(skip)]
    pub dir: PathBuf,
}

/// What [`link_registered`] did.
#[derive(Debug)]
pub struct Linked {
    /// The registered crates the crate depends on, directly or through
    /// each other (one version each, sorted by name).
    pub patches: Vec<Patch>,
    /// The `.cargo/config.toml` written; `None` when one not written by
    /// Braid is there (then `text` is what to put in it).
    pub written: Option<PathBuf>,
    /// The whole config Braid would write.
    pub text: String,
}

/// Where this braid's runtime crates are installed for operation crates
/// built outside a workflow: `home/runtime/<braid version>/`.
pub fn runtime_dir(home: &Path) -> PathBuf {
    home.join("runtime").join(env!("CARGO_PKG_VERSION"))
}

/// Writes a new operation crate `name` into `dir` (new or empty) and
/// installs the runtime crates it builds on under `home`.
pub fn new_operation(name: &str, dir: &Path, home: &Path) -> Result<Vec<PathBuf>, ScaffoldError> {
    if !braid_schema::is_lower_identifier(name) {
        return Err(ScaffoldError::Name(name.to_string()));
    }
    if dir.exists() && !fsutil::is_empty_dir(dir)? {
        return Err(ScaffoldError::NotEmpty(dir.to_path_buf()));
    }
    let data = Data { name: name.to_string(), ..Data::new(home, Vec::new())? };
    let mut written = Vec::new();
    for (file, template) in TEMPLATES {
        let target = dir.join(file);
        fsutil::write(&target, render(file, crate::sources::template(template), &data)?.as_bytes())?;
        written.push(target);
    }
    Ok(written)
}

/// Makes the registered crates that the operation crate in `dir` depends
/// on by version (`op_photo_proof = "0.1"`, for its value types) resolve
/// in its own `cargo build` and `cargo test`: their registry copies (and
/// those of the registered crates they depend on), patched in by path in
/// `dir/.cargo/config.toml` next to the runtime crates. A config Braid did
/// not write is left alone ([`Linked::written`] is `None`).
pub fn link_registered(dir: &Path, home: &Path, registry: &Registry) -> Result<Linked, ScaffoldError> {
    let files = registry::read_crate(dir)?;
    let cargo = dir.join("Cargo.toml");
    let bad = |reason: String| ScaffoldError::Manifest { path: cargo.clone(), reason };
    let table: toml::Table =
        files.get("Cargo.toml").map_or("", String::as_str).parse().map_err(|e| bad(format!("{e}")))?;
    let package = |key: &str| table.get("package").and_then(|p| p.get(key)).and_then(toml::Value::as_str);
    let (Some(name), Some(version)) = (package("name"), package("version")) else {
        return Err(bad("no [package] name and version".into()));
    };
    let version = semver::Version::parse(version).map_err(|e| bad(format!("package.version: {e}")))?;
    let mut patches = Vec::new();
    for op in registry.dependencies(&[(name, &version, &files)])? {
        let dir = op.source_dir().ok_or_else(|| bad(format!("{} has no directory in the registry", op.name())))?;
        patches.push(Patch {
            name: op.name().to_string(),
            version: op.version().to_string(),
            path_toml: toml::Value::String(dir.display().to_string()).to_string(),
            dir: dir.to_path_buf(),
        });
    }
    let text = render(".cargo/config.toml", crate::sources::template(CONFIG), &Data::new(home, patches.clone())?)?;
    let config = dir.join(".cargo/config.toml");
    let ours = match fsutil::read_to_string(&config) {
        Ok(existing) => existing.starts_with(CONFIG_MARKER),
        Err(_) => !config.exists(),
    };
    let written = ours.then(|| fsutil::write(&config, text.as_bytes()).map(|()| config)).transpose()?;
    Ok(Linked { patches, written, text })
}

const CONFIG: &str = "op/config.toml.hbs";

#[derive(Serialize)]
struct Data {
    name: String,
    braid: String,
    support: String,
    macros: String,
    registered: Vec<Patch>,
}

impl Data {
    /// Installs the runtime crates under `home` (once per braid version).
    fn new(home: &Path, registered: Vec<Patch>) -> Result<Self, ScaffoldError> {
        let installed = vendor::install_runtime(&runtime_dir(home))?;
        // Paths are TOML strings, quoted by the toml crate.
        let path = |krate: &str| {
            let dir = installed.get(krate).map(|d| d.display().to_string()).unwrap_or_default();
            toml::Value::String(dir).to_string()
        };
        Ok(Self {
            name: String::new(),
            braid: format!("braid {}", env!("CARGO_PKG_VERSION")),
            support: path("braid-support"),
            macros: path("braid-macros"),
            registered,
        })
    }
}

fn render(file: &str, template: &str, data: &Data) -> Result<String, ScaffoldError> {
    let mut hb = Handlebars::new();
    hb.set_strict_mode(true);
    hb.register_escape_fn(handlebars::no_escape);
    hb.render_template(template, data)
        .map_err(|e| ScaffoldError::Render { file: file.to_string(), message: e.to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_must_be_identifiers() {
        let dir = std::env::temp_dir().join("braid-scaffold-never-written");
        for bad in ["", "Op", "op-x", "1op", "op x", "op\"x"] {
            assert!(matches!(new_operation(bad, &dir, &dir), Err(ScaffoldError::Name(_))), "{bad}");
        }
        assert!(!dir.exists());
    }
}
