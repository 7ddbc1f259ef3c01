//! Vendoring: the crates a generated crate uses, with the runtime crates
//! they reach, written under `vendor/` with their dependencies on each
//! other pointing at those copies by path.

use std::collections::BTreeMap;
use std::path::Path;

use toml::{Table, Value};

use super::embedded::{embedded, runtime_crate};
use super::standalone::{for_each_dependency_table, manifests};
use super::{bad, CrateFiles, VendorError, RUNTIME};
use crate::fsutil::{self, File};

/// A standalone `Cargo.toml` linked for vendoring: its dependencies on
/// runtime crates, and on the crates of `linked` (name -> vendored
/// directory), point at `../<dir>` (from a crate bundled `depth` levels
/// down, `../../..`). Also returns the runtime crates it names.
fn link(
    text: &str,
    path: &str,
    depth: usize,
    linked: &BTreeMap<&str, &str>,
) -> Result<(String, Vec<String>), VendorError> {
    let mut t: Table = text.parse().map_err(|e| bad(path, format!("{e}")))?;
    let mut runtime = Vec::new();
    for_each_dependency_table(&mut t, |deps| {
        for (name, dep) in deps.iter_mut() {
            let krate = match dep {
                Value::Table(d) if d.contains_key("path") => continue,
                Value::Table(d) => d.get("package").and_then(Value::as_str).unwrap_or(name).to_string(),
                _ => name.clone(),
            };
            let dir = if RUNTIME.contains(&krate.as_str()) {
                runtime.push(krate.clone());
                runtime_crate(&krate).map_err(|e| bad(path, e.to_string()))?.dir.as_str()
            } else if let Some(dir) = linked.get(krate.as_str()) {
                dir
            } else {
                continue;
            };
            let mut d = match dep {
                Value::String(v) => Table::from_iter([("version".to_string(), Value::String(v.clone()))]),
                Value::Table(d) => d.clone(),
                _ => return Err(bad(path, format!("dependency `{name}` is neither a version nor a table"))),
            };
            d.insert("path".into(), Value::String(format!("{}{dir}", "../".repeat(depth + 1))));
            *dep = Value::Table(d);
        }
        Ok(())
    })?;
    let header = "# Vendored by braid: dependencies on Braid's runtime crates and on registered crates point at \
                  their copies here.\n";
    Ok((format!("{header}{}", toml::to_string(&t).map_err(|e| bad(path, format!("{e}")))?), runtime))
}

/// Writes the runtime crates under `dir/<crate>-<id>/`, linked to each
/// other, and returns the directory of each (for `[patch]` tables of
/// operation crates built outside a workflow).
pub fn install_runtime(dir: &Path) -> Result<BTreeMap<String, std::path::PathBuf>, VendorError> {
    let mut installed = BTreeMap::new();
    for krate in embedded()?.iter().filter(|c| RUNTIME.contains(&c.name.as_str())) {
        for (rel, text) in &krate.files {
            let text = if rel == "Cargo.toml" { link(text, rel, 0, &BTreeMap::new())?.0 } else { text.clone() };
            fsutil::write_if_changed(&dir.join(&krate.dir).join(rel), text.as_bytes())?;
        }
        installed.insert(krate.name.clone(), dir.join(&krate.dir));
    }
    Ok(installed)
}

/// A crate to vendor: its name, the directory it goes in ([`dir_name`])
/// and its standalone files.
#[derive(Debug, Clone, Copy)]
pub struct ToVendor<'a> {
    pub name: &'a str,
    pub dir: &'a str,
    pub files: &'a CrateFiles,
}

/// The `vendor/` files of a generated crate: each of `crates` (the
/// operations and the registered crates they depend on) and the runtime
/// crates they reach (braid-support always), linked to each other.
pub fn vendor(crates: &[ToVendor<'_>]) -> Result<Vec<File>, VendorError> {
    let support = runtime_crate("braid-support")?;
    let linked: BTreeMap<&str, &str> = crates.iter().map(|c| (c.name, c.dir)).collect();
    let mut todo: Vec<ToVendor<'_>> = crates.to_vec();
    todo.push(ToVendor { name: &support.name, dir: &support.dir, files: &support.files });
    let mut done: BTreeMap<String, Vec<File>> = BTreeMap::new();
    while let Some(ToVendor { dir, files, .. }) = todo.pop() {
        if done.contains_key(dir) {
            continue;
        }
        let manifests = manifests(files)?;
        let mut out = Vec::new();
        for (rel, text) in files {
            let path = format!("vendor/{dir}/{rel}");
            let bundled = rel.strip_suffix("Cargo.toml").filter(|d| manifests.iter().any(|m| m == d));
            let contents = if let Some(bundled) = bundled {
                let (linked, runtime) = link(text, &path, bundled.matches('/').count(), &linked)?;
                for dep in runtime {
                    let krate = runtime_crate(&dep)?;
                    todo.push(ToVendor { name: &krate.name, dir: &krate.dir, files: &krate.files });
                }
                linked
            } else {
                text.clone()
            };
            out.push(File { path, contents });
        }
        done.insert(dir.to_string(), out);
    }
    let mut files: Vec<File> = done.into_values().flatten().collect();
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::super::standalone::{bundled, dependencies, standalone};
    use super::*;

    #[test]
    fn vendoring_links_the_runtime_crates() {
        let op = embedded().unwrap().iter().find(|c| c.name == "op_multihash").unwrap();
        let files = vendor(&[ToVendor { name: &op.name, dir: &op.dir, files: &op.files }]).unwrap();
        let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
        let support = &runtime_crate("braid-support").unwrap().dir;
        assert!(paths.contains(&format!("vendor/{}/src/lib.rs", op.dir).as_str()));
        assert!(paths.contains(&format!("vendor/{support}/src/wasm.rs").as_str()), "runtime crates come along");
        for name in ["braid-macros", "braid-schema"] {
            let dir = &runtime_crate(name).unwrap().dir;
            assert!(paths.contains(&format!("vendor/{dir}/Cargo.toml").as_str()), "{name}");
        }
        let manifest = &files.iter().find(|f| f.path == format!("vendor/{}/Cargo.toml", op.dir)).unwrap().contents;
        let t: Table = manifest.parse().unwrap();
        assert_eq!(t["dependencies"]["braid-support"]["path"].as_str(), Some(format!("../{support}").as_str()));
        assert!(op.dir.starts_with("op_multihash-") && op.dir.len() == "op_multihash-".len() + 10, "{}", op.dir);
    }

    #[test]
    fn bundled_crates_are_kept_and_linked_from_their_depth() {
        let op = "[package]\nname = \"op_x\"\nversion = \"0.1.0\"\n[dependencies]\nbraid-support = \"0.1\"\n\
                  op_x_macro = { path = \"./macro/\" }\n[build-dependencies]\nop_x_gen = { path = \"tools/gen\" }\n";
        let op = standalone(op, None, "Cargo.toml").unwrap();
        assert_eq!(bundled(&op, "Cargo.toml").unwrap(), ["macro", "tools/gen"]);
        let helper = |name: &str| {
            format!("[package]\nname = \"{name}\"\nversion = \"0.1.0\"\n[dependencies]\nbraid-support = \"0.1\"\n")
        };
        let files = CrateFiles::from([
            ("Cargo.toml".to_string(), op),
            ("src/lib.rs".to_string(), String::new()),
            ("macro/Cargo.toml".to_string(), helper("op_x_macro")),
            ("macro/src/lib.rs".to_string(), String::new()),
            ("tools/gen/Cargo.toml".to_string(), helper("op_x_gen")),
            ("tools/gen/src/lib.rs".to_string(), String::new()),
            ("src/fixture/Cargo.toml".to_string(), "not a manifest [".to_string()),
        ]);
        assert_eq!(manifests(&files).unwrap(), ["", "macro/", "tools/gen/"]);
        let out = vendor(&[ToVendor { name: "op_x", dir: "op_x-abc", files: &files }]).unwrap();
        let support = &runtime_crate("braid-support").unwrap().dir;
        let linked = |rel: &str| -> Table {
            out.iter().find(|f| f.path == format!("vendor/op_x-abc/{rel}")).unwrap().contents.parse().unwrap()
        };
        let support_path = |t: &Table| t["dependencies"]["braid-support"]["path"].as_str().unwrap().to_string();
        assert_eq!(support_path(&linked("Cargo.toml")), format!("../{support}"));
        assert_eq!(support_path(&linked("macro/Cargo.toml")), format!("../../{support}"));
        assert_eq!(support_path(&linked("tools/gen/Cargo.toml")), format!("../../../{support}"));
        assert_eq!(linked("Cargo.toml")["dependencies"]["op_x_macro"]["path"].as_str(), Some("macro"));

        let mut missing = files.clone();
        missing.remove("tools/gen/Cargo.toml");
        assert!(manifests(&missing).unwrap_err().to_string().contains("tools/gen/Cargo.toml"));
    }

    #[test]
    fn dependencies_on_registered_crates_are_linked_to_their_copies() {
        let op = "[package]\nname = \"op_y\"\nversion = \"0.1.0\"\n[dependencies]\nbraid-support = \"0.1\"\n\
                  images = { package = \"op_img\", version = \"0.3\", default-features = false }\nblake3 = \"1\"\n\
                  helper = { path = \"helper\" }\n";
        let helper = "[package]\nname = \"helper\"\nversion = \"0.1.0\"\n[target.'cfg(unix)'.dependencies]\n\
                      op_img = \"0.3.1\"\n";
        let files = CrateFiles::from([
            ("Cargo.toml".to_string(), op.to_string()),
            ("helper/Cargo.toml".to_string(), helper.to_string()),
        ]);
        let want: Vec<(String, String)> =
            [("blake3", "1"), ("braid-support", "0.1"), ("op_img", "0.3"), ("op_img", "0.3.1")]
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect();
        assert_eq!(dependencies(&files).unwrap(), want);
        let img = CrateFiles::from([(
            "Cargo.toml".to_string(),
            "[package]\nname = \"op_img\"\nversion = \"0.3.2\"\n".to_string(),
        )]);
        let out = vendor(&[
            ToVendor { name: "op_y", dir: "op_y-abc", files: &files },
            ToVendor { name: "op_img", dir: "op_img-def", files: &img },
        ])
        .unwrap();
        let linked = |rel: &str| -> Table {
            out.iter().find(|f| f.path == format!("vendor/{rel}")).unwrap().contents.parse().unwrap()
        };
        let top = linked("op_y-abc/Cargo.toml");
        assert_eq!(top["dependencies"]["images"]["path"].as_str(), Some("../op_img-def"));
        assert_eq!(top["dependencies"]["images"]["default-features"].as_bool(), Some(false));
        assert!(top["dependencies"]["blake3"].as_str().is_some(), "crates.io stays by version");
        let inner = linked("op_y-abc/helper/Cargo.toml");
        assert_eq!(inner["target"]["cfg(unix)"]["dependencies"]["op_img"]["path"].as_str(), Some("../../op_img-def"));
        assert!(out.iter().any(|f| f.path == "vendor/op_img-def/Cargo.toml"));
    }
}
