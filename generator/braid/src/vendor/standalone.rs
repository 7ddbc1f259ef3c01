//! A member of a cargo workspace made standalone: inheritance resolved,
//! dev-only tables dropped, dependencies on the runtime crates by version,
//! path dependencies kept only inside the crate (the crates it bundles).

use std::path::Path;

use toml::{Table, Value};

use super::{bad, CrateFiles, VendorError, RUNTIME};

/// The fields and dependencies a workspace's members may inherit.
#[derive(Debug, Clone, Default)]
pub struct Workspace {
    package: Table,
    dependencies: Table,
}

impl Workspace {
    /// Reads a workspace's `Cargo.toml`; `None` if it has no `[workspace]`.
    pub fn from_toml(text: &str, path: &str) -> Result<Option<Self>, VendorError> {
        let t: Table = text.parse().map_err(|e| bad(path, format!("{e}")))?;
        let Some(ws) = t.get("workspace").and_then(Value::as_table) else { return Ok(None) };
        let table = |key: &str| ws.get(key).and_then(Value::as_table).cloned().unwrap_or_default();
        Ok(Some(Self { package: table("package"), dependencies: table("dependencies") }))
    }

    /// The workspace enclosing `crate_dir` (its nearest ancestor whose
    /// `Cargo.toml` has `[workspace]`), if any.
    pub fn enclosing(crate_dir: &Path) -> Result<Option<Self>, VendorError> {
        for dir in crate_dir.ancestors().skip(1) {
            let path = dir.join("Cargo.toml");
            if let Ok(text) = std::fs::read_to_string(&path) {
                if let Some(ws) = Self::from_toml(&text, &path.display().to_string())? {
                    return Ok(Some(ws));
                }
            }
        }
        Ok(None)
    }
}

/// A crate's `Cargo.toml` made standalone: fields and dependencies it
/// inherits from `workspace` filled in, `[dev-dependencies]`, targets other
/// than the library and `[badges]` dropped, dependencies on the runtime
/// crates by version only. A registered crate builds from its own files,
/// the registry and crates.io: a path dependency names a directory inside
/// the crate (a crate it *bundles*, see [`bundled`]), or has a `version`,
/// which it keeps without the path, as `cargo publish` does (it resolves to
/// the registered crate of that name, see [`dependencies`], or else to
/// crates.io). A git dependency, or a path out of the crate without a
/// version, is an error. `path` names the file in errors.
pub fn standalone(text: &str, workspace: Option<&Workspace>, path: &str) -> Result<String, VendorError> {
    let mut t: Table = text.parse().map_err(|e| bad(path, format!("{e}")))?;
    if t.contains_key("workspace") {
        t.remove("workspace");
    }
    let empty = Workspace::default();
    let ws = workspace.unwrap_or(&empty);
    if let Some(Value::Table(package)) = t.get_mut("package") {
        for (key, value) in package.iter_mut() {
            if is_inherited(value) {
                *value = ws.package.get(key).cloned().ok_or_else(|| {
                    bad(path, format!("`package.{key}` is inherited from a workspace that does not set it"))
                })?;
            }
        }
    }
    for key in ["dev-dependencies", "bench", "example", "test", "bin", "badges", "patch", "replace", "profile"] {
        t.remove(key);
    }
    let fix = |deps: &mut Table| -> Result<(), VendorError> {
        for (name, dep) in deps.iter_mut() {
            // A path the workspace declares is relative to the workspace,
            // so never one of this crate's directories.
            let inherited = is_inherited(dep);
            if inherited {
                *dep = Value::Table(inherit(ws, name, dep).map_err(|r| bad(path, r))?);
            }
            let Value::Table(d) = dep else { continue };
            let krate = d.get("package").and_then(Value::as_str).unwrap_or(name).to_string();
            let runtime = RUNTIME.contains(&krate.as_str());
            if runtime {
                // The runtime crates are this braid's copies, wherever the
                // crate found them.
                d.remove("git");
            }
            if d.contains_key("git") {
                return Err(bad(
                    path,
                    format!(
                        "dependency `{name}` is a git dependency; an operation builds from its own files, the \
                         registry and crates.io: depend on a version, or move the crate into this one's \
                         directory (`path = \"{name}\"`)"
                    ),
                ));
            }
            let Some(dep_path) = d.get("path").and_then(Value::as_str) else {
                if runtime && !d.contains_key("version") {
                    return Err(bad(path, format!("dependency `{name}` needs a version, such as \"0.1\"")));
                }
                continue;
            };
            if !runtime && !inherited {
                if let Some(dir) = bundled_dir(dep_path) {
                    d.insert("path".into(), Value::String(dir));
                    continue;
                }
            }
            if !d.contains_key("version") {
                return Err(bad(
                    path,
                    format!(
                        "dependency `{name}` is a path out of the crate without a version; an operation builds \
                         from its own files, the registry and crates.io: add the `version` it resolves to there \
                         (such as \"0.1\"), or move the crate into this one's directory (`path = \"{name}\"`)"
                    ),
                ));
            }
            d.remove("path");
        }
        Ok(())
    };
    for_each_dependency_table(&mut t, fix)?;
    toml::to_string(&t).map_err(|e| bad(path, format!("{e}")))
}

/// The dependencies by version (`name = "0.1"`, no path) of a standalone
/// crate's `files`, its bundled crates' included: each crate's name (its
/// `package` if renamed) and version requirement, sorted, without repeats.
/// Those naming a registered crate resolve to it (see
/// `Registry::dependencies`).
pub fn dependencies(files: &CrateFiles) -> Result<Vec<(String, String)>, VendorError> {
    let mut out = std::collections::BTreeSet::new();
    for dir in manifests(files)? {
        let path = format!("{dir}Cargo.toml");
        let mut t: Table = files[&path].parse().map_err(|e| bad(&path, format!("{e}")))?;
        for_each_dependency_table(&mut t, |deps| {
            for (name, dep) in deps.iter() {
                let (krate, version) = match dep {
                    Value::String(v) => (name.as_str(), v.as_str()),
                    Value::Table(d) if !d.contains_key("path") => (
                        d.get("package").and_then(Value::as_str).unwrap_or(name),
                        d.get("version").and_then(Value::as_str).unwrap_or("*"),
                    ),
                    _ => continue,
                };
                out.insert((krate.to_string(), version.to_string()));
            }
            Ok(())
        })?;
    }
    Ok(out.into_iter().collect())
}

/// Most levels of crates bundled in crates bundled in an operation.
pub const MAX_BUNDLE_DEPTH: usize = 4;

/// A path dependency's directory if it is inside the crate: relative, made
/// of plain names (no `.`, `..`, empty or hidden components), normalised
/// to `a/b`.
fn bundled_dir(path: &str) -> Option<String> {
    let parts: Vec<&str> = path.trim_start_matches("./").trim_end_matches('/').split('/').collect();
    let plain = |c: &&str| {
        !c.is_empty() && !c.starts_with('.') && c.chars().all(|ch| ch.is_ascii_alphanumeric() || "-_".contains(ch))
    };
    (!parts.is_empty() && parts.iter().all(plain)).then(|| parts.join("/"))
}

/// The directories of the crates a standalone `Cargo.toml` bundles (its
/// path dependencies, all inside the crate once [`standalone`] accepted
/// it), relative to the crate, sorted, without duplicates.
pub fn bundled(text: &str, path: &str) -> Result<Vec<String>, VendorError> {
    let mut t: Table = text.parse().map_err(|e| bad(path, format!("{e}")))?;
    let mut dirs = std::collections::BTreeSet::new();
    for_each_dependency_table(&mut t, |deps| {
        for (name, dep) in deps.iter() {
            if let Some(p) = dep.get("path").and_then(Value::as_str) {
                dirs.insert(
                    bundled_dir(p)
                        .ok_or_else(|| bad(path, format!("dependency `{name}`: `{p}` is outside the crate")))?,
                );
            }
        }
        Ok(())
    })?;
    Ok(dirs.into_iter().collect())
}

/// The `Cargo.toml` files among a standalone crate's `files`: its own,
/// then those of the crates it bundles, recursively (at most
/// [`MAX_BUNDLE_DEPTH`] levels), each with its directory (`""`, `"a/"`).
pub fn manifests(files: &CrateFiles) -> Result<Vec<String>, VendorError> {
    let mut out = Vec::new();
    let mut todo = vec![(String::new(), 0)];
    while let Some((dir, depth)) = todo.pop() {
        let path = format!("{dir}Cargo.toml");
        let text = files.get(&path).ok_or_else(|| bad(&path, "missing: the crate bundles a directory without one"))?;
        if !out.contains(&dir) {
            for sub in bundled(text, &path)? {
                if depth == MAX_BUNDLE_DEPTH {
                    return Err(bad(&path, format!("crates bundled more than {MAX_BUNDLE_DEPTH} levels deep")));
                }
                todo.push((format!("{dir}{sub}/"), depth + 1));
            }
            out.push(dir);
        }
    }
    out.sort();
    Ok(out)
}

/// The workspace's entry for `name`, merged with the member's own keys
/// (`features` added, others override).
fn inherit(ws: &Workspace, name: &str, local: &Value) -> Result<Table, String> {
    let mut merged = match ws.dependencies.get(name) {
        Some(Value::String(v)) => Table::from_iter([("version".to_string(), Value::String(v.clone()))]),
        Some(Value::Table(m)) => m.clone(),
        _ => return Err(format!("dependency `{name}` is inherited from a workspace that does not declare it")),
    };
    if let Value::Table(local) = local {
        for (k, v) in local {
            match k.as_str() {
                "workspace" => {}
                "features" => {
                    let mut all = merged.get("features").and_then(Value::as_array).cloned().unwrap_or_default();
                    all.extend(v.as_array().cloned().unwrap_or_default());
                    merged.insert("features".into(), Value::Array(all));
                }
                _ => {
                    merged.insert(k.clone(), v.clone());
                }
            }
        }
    }
    Ok(merged)
}

/// Runs `f` on `[dependencies]`, `[build-dependencies]` and their
/// `[target.*]` forms.
pub(super) fn for_each_dependency_table(
    t: &mut Table,
    mut f: impl FnMut(&mut Table) -> Result<(), VendorError>,
) -> Result<(), VendorError> {
    for key in ["dependencies", "build-dependencies"] {
        if let Some(Value::Table(deps)) = t.get_mut(key) {
            f(deps)?;
        }
    }
    if let Some(Value::Table(targets)) = t.get_mut("target") {
        for (_, target) in targets.iter_mut() {
            if let Value::Table(target) = target {
                target.remove("dev-dependencies");
                for key in ["dependencies", "build-dependencies"] {
                    if let Some(Value::Table(deps)) = target.get_mut(key) {
                        f(deps)?;
                    }
                }
            }
        }
    }
    Ok(())
}

fn is_inherited(value: &Value) -> bool {
    value.get("workspace").and_then(Value::as_bool) == Some(true)
}

/// `package.name` and `package.version` of a standalone `Cargo.toml`.
pub fn package_id(text: &str, path: &str) -> Result<(String, String), VendorError> {
    let t: Table = text.parse().map_err(|e| bad(path, format!("{e}")))?;
    let field = |key: &str| {
        t.get("package")
            .and_then(|p| p.get(key))
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| bad(path, format!("no `package.{key}`")))
    };
    Ok((field("name")?, field("version")?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_dependencies_out_of_the_crate_are_refused_without_a_version() {
        for dep in [
            "{ path = \"../mine\" }",
            "{ path = \"/abs/mine\" }",
            "{ path = \"a/../../mine\" }",
            "{ path = \".hidden\" }",
            "{ path = \"a//b\" }",
            "{ path = \"mine\", git = \"https://example.com/mine\" }",
            "{ git = \"https://example.com/mine\" }",
        ] {
            let text = format!("[package]\nname = \"op_x\"\nversion = \"0.1.0\"\n[dependencies]\nmine = {dep}\n");
            let e = standalone(&text, None, "op_x/Cargo.toml").unwrap_err().to_string();
            assert!(e.contains("op_x/Cargo.toml") && e.contains("`mine`"), "{dep}: {e}");
        }
        for dep in ["{ path = \"../mine\", version = \"0.2\" }", "{ path = \"/abs/mine\", version = \"0.2\" }"] {
            let text = format!("[package]\nname = \"op_x\"\nversion = \"0.1.0\"\n[dependencies]\nmine = {dep}\n");
            let t: Table = standalone(&text, None, "op_x/Cargo.toml").unwrap().parse().unwrap();
            assert!(t["dependencies"]["mine"].get("path").is_none(), "{dep}: kept by version, as cargo publish does");
            assert_eq!(t["dependencies"]["mine"]["version"].as_str(), Some("0.2"));
        }
        let inherited = "[package]\nname = \"op_x\"\nversion.workspace = true\n";
        let e = standalone(inherited, None, "Cargo.toml").unwrap_err().to_string();
        assert!(e.contains("package.version"), "{e}");
    }
}
