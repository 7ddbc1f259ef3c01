//! What the operation's crate declares: name, version, description,
//! repository and license (cargo's `CARGO_PKG_*`), features from its
//! `Cargo.toml`, and whether it is `no_std` from the inner attributes of its
//! library root. Targets follow from these: `native` always, `nostd` when
//! the root is `no_std` (possibly behind `cfg_attr`), `wasm` when the crate
//! has a `wasm` feature. The macro reads the crate being compiled
//! ([`CrateInfo::load`]); `derive_manifest` reads the same from source text.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use braid_schema::{Kind, Platform, TypeDef};

/// The library root when `Cargo.toml` has no `[lib] path`.
pub const DEFAULT_LIB_ROOT: &str = "src/lib.rs";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrateInfo {
    pub name: String,
    pub version: String,
    pub description: String,
    pub repository: String,
    pub license: String,
    /// Declared features, sorted, without `default`.
    pub features: Vec<String>,
    pub no_std: bool,
    /// The value types its `#[derive(Value)]`s define, by name.
    pub types: BTreeMap<String, TypeDef>,
    /// What its Cargo.toml says it is ([`CargoToml::kind`]).
    pub kind: Kind,
}

/// The package fields cargo gives the compiler as `CARGO_PKG_NAME`,
/// `_VERSION`, `_DESCRIPTION`, `_REPOSITORY` and `_LICENSE` (empty when the
/// package does not set them).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Package {
    pub name: String,
    pub version: String,
    pub description: String,
    pub repository: String,
    pub license: String,
}

impl CrateInfo {
    /// Reads the crate being compiled: cargo's environment, its
    /// `Cargo.toml` and its library root.
    pub fn load() -> Result<Self, String> {
        let env = |key: &str| std::env::var(key).unwrap_or_default();
        let dir = PathBuf::from(
            std::env::var("CARGO_MANIFEST_DIR")
                .map_err(|_| "CARGO_MANIFEST_DIR is not set: build with cargo".to_string())?,
        );
        let cargo_toml = std::fs::read_to_string(dir.join("Cargo.toml"))
            .map_err(|e| format!("cannot read {}: {e}", dir.join("Cargo.toml").display()))?;
        let manifest = parse_cargo_toml(&cargo_toml)?;
        let lib_root = dir.join(manifest.lib_path.as_deref().unwrap_or(DEFAULT_LIB_ROOT));
        // A crate without a library root (a test binary) is not `no_std`.
        let root = match std::fs::read_to_string(&lib_root) {
            Ok(text) => Some(syn::parse_file(&text).map_err(|e| format!("cannot parse {}: {e}", lib_root.display()))?),
            Err(_) => None,
        };
        // Every file under src/ (and the root), for the value types: a file
        // that does not parse is the compiler's to report.
        let mut paths = Vec::new();
        rust_files(&dir.join("src"), &mut paths);
        if !paths.contains(&lib_root) {
            paths.push(lib_root.clone());
        }
        let files: Vec<syn::File> = paths
            .iter()
            .filter_map(|p| std::fs::read_to_string(p).ok())
            .filter_map(|text| syn::parse_file(&text).ok())
            .collect();
        let types = crate::value::collect(&files, &braid_schema::lib_name(&env("CARGO_PKG_NAME")));
        let package = Package {
            name: env("CARGO_PKG_NAME"),
            version: env("CARGO_PKG_VERSION"),
            description: env("CARGO_PKG_DESCRIPTION"),
            repository: env("CARGO_PKG_REPOSITORY"),
            license: env("CARGO_PKG_LICENSE"),
        };
        Ok(Self::new(package, manifest, root.as_ref(), types))
    }

    /// From the package fields, the declared features (as
    /// [`parse_cargo_toml`] reads them), the parsed library root (`None`
    /// when the crate has none) and the value types ([`crate::value::collect`]).
    pub fn new(
        package: Package,
        manifest: CargoToml,
        lib_root: Option<&syn::File>,
        types: BTreeMap<String, TypeDef>,
    ) -> Self {
        let Package { name, version, description, repository, license } = package;
        let CargoToml { features, kind, .. } = manifest;
        let no_std = lib_root.is_some_and(|root| root.attrs.iter().any(attr_is_no_std));
        CrateInfo { name, version, description, repository, license, features, no_std, types, kind }
    }

    /// Where the operation can run, in manifest order.
    pub fn targets(&self) -> Vec<Platform> {
        let mut t = vec![Platform::Native];
        if self.no_std {
            t.push(Platform::Nostd);
        }
        if self.features.iter().any(|f| f == "wasm") {
            t.push(Platform::Wasm);
        }
        t
    }
}

/// The `.rs` files under `dir`, recursively, sorted (none if unreadable).
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    paths.sort();
    for path in paths {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// What Braid reads from an operation crate's `Cargo.toml`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CargoToml {
    /// Declared features, sorted, without `default`.
    pub features: Vec<String>,
    /// `[lib] path`, if set.
    pub lib_path: Option<String>,
    /// `[package.metadata.braid] kind`: `"operation"` (the default) or
    /// `"types"`, a crate of value types only.
    pub kind: Kind,
}

/// Reads a `Cargo.toml`'s features, `[lib] path` and Braid kind.
pub fn parse_cargo_toml(text: &str) -> Result<CargoToml, String> {
    let table: toml::Table = text.parse().map_err(|e| format!("cannot parse Cargo.toml: {e}"))?;
    let mut features: Vec<String> = table
        .get("features")
        .and_then(|f| f.as_table())
        .map(|f| f.keys().filter(|k| *k != "default").cloned().collect())
        .unwrap_or_default();
    features.sort();
    let lib_path = table.get("lib").and_then(|l| l.get("path")).and_then(|p| p.as_str()).map(String::from);
    let kind = match table.get("package").and_then(|p| p.get("metadata")).and_then(|m| m.get("braid")).and_then(|b| b.get("kind")) {
        None => Kind::Operation,
        Some(v) => match v.as_str() {
            Some("operation") => Kind::Operation,
            Some("types") => Kind::Types,
            _ => return Err(format!("[package.metadata.braid] kind = {v}: write \"operation\" (the default) or \"types\" (a crate of value types only)")),
        },
    };
    Ok(CargoToml { features, lib_path, kind })
}

/// Whether an inner attribute of the library root is `#![no_std]`,
/// directly or in a `cfg_attr`.
pub fn attr_is_no_std(attr: &syn::Attribute) -> bool {
    if attr.path().is_ident("no_std") {
        return true;
    }
    if attr.path().is_ident("cfg_attr") {
        let nested = attr.parse_args_with(syn::punctuated::Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated);
        if let Ok(list) = nested {
            return list.iter().skip(1).any(|m| m.path().is_ident("no_std"));
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_features_lib_path_and_kind() {
        let m = parse_cargo_toml("[features]\ndefault = [\"std\"]\nwasm = []\nstd = []\n[lib]\npath = \"lib.rs\"\n")
            .unwrap();
        assert_eq!(m.features, ["std", "wasm"]);
        assert_eq!(m.lib_path.as_deref(), Some("lib.rs"));
        assert_eq!(m.kind, Kind::Operation);
        let m = parse_cargo_toml("[package]\nname = \"x\"\n").unwrap();
        assert!(m.features.is_empty() && m.lib_path.is_none());
        assert!(parse_cargo_toml("[features").is_err());
        let types = "[package]\nname = \"x\"\n[package.metadata.braid]\nkind = \"types\"\n";
        assert_eq!(parse_cargo_toml(types).unwrap().kind, Kind::Types);
        let e = parse_cargo_toml(&types.replace("\"types\"", "\"type\"")).unwrap_err();
        assert!(e.contains("kind = \"type\": write \"operation\" (the default) or \"types\""), "{e}");
    }

    #[test]
    fn finds_no_std_in_either_spelling() {
        let f: syn::File = syn::parse_quote!(#![no_std]);
        assert!(f.attrs.iter().any(attr_is_no_std));
        let f: syn::File = syn::parse_quote!(#![cfg_attr(not(feature = "std"), no_std)]);
        assert!(f.attrs.iter().any(attr_is_no_std));
        let f: syn::File = syn::parse_quote!(#![forbid(unsafe_code)]);
        assert!(!f.attrs.iter().any(attr_is_no_std));
    }

    #[test]
    fn targets_follow_declarations() {
        let mut info = CrateInfo {
            name: "op".into(),
            version: "0.1.0".into(),
            description: "d".into(),
            repository: String::new(),
            license: String::new(),
            features: vec!["std".into(), "wasm".into()],
            no_std: true,
            types: Default::default(),
            kind: Kind::Operation,
        };
        assert_eq!(info.targets(), Platform::ALL);
        info.no_std = false;
        info.features.clear();
        assert_eq!(info.targets(), [Platform::Native]);
    }
}
