//! `braid new op`: a new operation crate from `templates/op/`, which builds
//! (native, `no_std`, wasm32) and passes its test at once, anywhere. Its
//! dependencies on Braid's runtime crates resolve through a `[patch]` in
//! `.cargo/config.toml` pointing at copies installed under the registry's
//! home, so it needs no checkout of Braid.

use std::path::{Path, PathBuf};

use handlebars::Handlebars;
use serde::Serialize;

use crate::fsutil::{self, FsError};
use crate::vendor::{self, VendorError};

const TEMPLATES: &[(&str, &str)] = &[
    ("Cargo.toml", include_str!("../../../templates/op/Cargo.toml.hbs")),
    ("src/lib.rs", include_str!("../../../templates/op/src/lib.rs.hbs")),
    ("README.md", include_str!("../../../templates/op/README.md.hbs")),
    (".cargo/config.toml", include_str!("../../../templates/op/config.toml.hbs")),
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
}

/// Where this braid's runtime crates are installed for operation crates
/// built outside a workflow: `home/runtime/<braid version>/`.
pub fn runtime_dir(home: &Path) -> PathBuf {
    home.join("runtime").join(env!("CARGO_PKG_VERSION"))
}

/// Writes a new operation crate `name` into `dir` (new or empty) and
/// installs the runtime crates it builds on under `home`.
pub fn new_operation(name: &str, dir: &Path, home: &Path) -> Result<Vec<PathBuf>, ScaffoldError> {
    let valid = name.len() <= 64
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if !valid {
        return Err(ScaffoldError::Name(name.to_string()));
    }
    if dir.exists() && !fsutil::is_empty_dir(dir)? {
        return Err(ScaffoldError::NotEmpty(dir.to_path_buf()));
    }
    let installed = vendor::install_runtime(&runtime_dir(home))?;
    // Paths are TOML strings, quoted by the toml crate.
    let path = |krate: &str| {
        let dir = installed.get(krate).map(|d| d.display().to_string()).unwrap_or_default();
        toml::Value::String(dir).to_string()
    };
    #[derive(Serialize)]
    struct Data<'a> {
        name: &'a str,
        braid: String,
        support: String,
        macros: String,
    }
    let data = Data {
        name,
        braid: format!("braid {}", env!("CARGO_PKG_VERSION")),
        support: path("braid-support"),
        macros: path("braid-macros"),
    };
    let mut hb = Handlebars::new();
    hb.set_strict_mode(true);
    hb.register_escape_fn(handlebars::no_escape);
    let mut written = Vec::new();
    for (file, template) in TEMPLATES {
        let text = hb
            .render_template(template, &data)
            .map_err(|e| ScaffoldError::Render { file: file.to_string(), message: e.to_string() })?;
        let target = dir.join(file);
        fsutil::write(&target, text.as_bytes())?;
        written.push(target);
    }
    Ok(written)
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
