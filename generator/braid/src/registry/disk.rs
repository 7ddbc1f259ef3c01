//! The registry on disk (`$BRAID_HOME/registry`): opening it with this
//! build's built-ins registered, and adding and removing entries under its
//! lock, so that processes sharing it never see half an entry.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use braid_schema::OperationManifest;
use serde::{Deserialize, Serialize};

use super::{
    builtins, crate_error, default_home, Origin, Prepared, RegisteredOperation, Registry, RegistryError, Source,
};
use crate::fsutil;
use crate::vendor;

/// What [`Registry::add`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Added {
    /// A new version.
    New,
    /// The same name, version and sources were registered already.
    Unchanged,
    /// A built-in of another `braid` build replaced by this build's.
    Replaced,
}

#[derive(Serialize, Deserialize)]
struct Entry {
    origin: Origin,
    manifest: OperationManifest,
}

impl Registry {
    /// The registry in `home/registry` (created if missing), with this
    /// build's built-in operations registered.
    pub fn open(home: &Path) -> Result<Self, RegistryError> {
        let dir = home.join("registry");
        fsutil::create_dir_all(&dir)?;
        let mut registry = Self::load(&dir)?;
        let stamp = dir.join("builtin").join(builtin_stamp());
        if !stamp.exists() {
            let _lock = registry.lock()?;
            // Another process may have installed them while this one waited.
            registry = Self::load(&dir)?;
            let builtins = builtins().map_err(|e| crate_error("the built-in operations", e))?;
            for prepared in builtins {
                registry.add_locked(prepared.clone(), Origin::Builtin)?;
            }
            fsutil::write(&stamp, b"")?;
        }
        Ok(registry)
    }

    /// [`Registry::open`] on [`default_home`].
    pub fn open_default() -> Result<Self, RegistryError> {
        Self::open(&default_home())
    }

    /// Reads every entry under `dir`.
    fn load(dir: &Path) -> Result<Self, RegistryError> {
        let mut operations = Vec::new();
        let ops = dir.join("operations");
        if ops.is_dir() {
            for rel in fsutil::walk(&ops)? {
                let path = ops.join(&rel);
                if path.extension().is_none_or(|e| e != "json") {
                    continue;
                }
                let damaged = |reason: String| RegistryError::Damaged { path: path.clone(), reason };
                let entry: Entry =
                    serde_json::from_str(&fsutil::read_to_string(&path)?).map_err(|e| damaged(e.to_string()))?;
                let expected = Path::new(&entry.manifest.name).join(format!("{}.json", entry.manifest.version));
                if rel != expected {
                    return Err(damaged(format!("holds {} {}", entry.manifest.name, entry.manifest.version)));
                }
                let source = dir.join("sources").join(entry.manifest.source.as_deref().unwrap_or_default());
                if !source.is_dir() {
                    return Err(damaged(format!("its source {} is missing", source.display())));
                }
                operations.push(
                    RegisteredOperation::new(entry.manifest, entry.origin, Source::Dir(source)).map_err(damaged)?,
                );
            }
        }
        let mut registry = Self { operations, dir: Some(dir.to_path_buf()) };
        registry.sort();
        Ok(registry)
    }
}

impl Registry {
    /// The exclusive lock of a registry on disk (other processes wait).
    fn lock(&self) -> Result<Option<std::fs::File>, RegistryError> {
        let Some(dir) = &self.dir else { return Ok(None) };
        let path = dir.join("lock");
        let file = std::fs::File::create(&path).map_err(fsutil::at(&path))?;
        file.lock().map_err(fsutil::at(&path))?;
        Ok(Some(file))
    }

    /// Registers `prepared`. The same name, version and source again is a
    /// no-op; the same name and version with another source is refused,
    /// except that a built-in replaces the built-in of another `braid`
    /// build (its version id changes with its source, so nothing pinned to
    /// the old one silently gets other code).
    pub fn add(&mut self, prepared: Prepared, origin: Origin) -> Result<Added, RegistryError> {
        let _lock = self.lock()?;
        // Another process may have written since this one loaded.
        if let Some(dir) = self.dir.clone() {
            *self = Self::load(&dir)?;
        }
        self.add_locked(prepared, origin)
    }

    fn add_locked(&mut self, prepared: Prepared, origin: Origin) -> Result<Added, RegistryError> {
        let Prepared { manifest, files, .. } = prepared;
        let existing =
            self.operations.iter().position(|op| op.name() == manifest.name && op.manifest.version == manifest.version);
        let mut outcome = Added::New;
        if let Some(i) = existing {
            let old = &self.operations[i];
            if old.manifest == manifest {
                return Ok(Added::Unchanged);
            }
            if !(old.origin == Origin::Builtin && origin == Origin::Builtin) {
                return Err(RegistryError::Taken {
                    name: manifest.name.clone(),
                    version: manifest.version.clone(),
                    existing: old.source_id().to_string(),
                });
            }
            let old = self.operations.remove(i);
            self.forget(&old)?;
            outcome = Added::Replaced;
        }
        let source = match &self.dir {
            None => Source::Memory(Arc::new(files)),
            Some(dir) => {
                let source_id = manifest.source.clone().unwrap_or_default();
                let target = dir.join("sources").join(&source_id);
                if !target.is_dir() {
                    let tmp = dir.join("sources").join(format!(".{source_id}.{}", std::process::id()));
                    let _ = std::fs::remove_dir_all(&tmp);
                    for (rel, text) in &files {
                        fsutil::write(&tmp.join(rel), text.as_bytes())?;
                    }
                    std::fs::rename(&tmp, &target).map_err(fsutil::at(&target))?;
                }
                let entry = Entry { origin, manifest: manifest.clone() };
                let path = entry_path(dir, &manifest.name, &manifest.version);
                let text = serde_json::to_string_pretty(&entry).expect("an entry serializes") + "\n";
                fsutil::write_if_changed(&path, text.as_bytes())?;
                Source::Dir(target)
            }
        };
        let op = RegisteredOperation::new(manifest, origin, source).map_err(|e| crate_error("the registry", e))?;
        self.operations.push(op);
        self.sort();
        Ok(outcome)
    }

    /// Removes `name` `version`; its source goes too unless another entry
    /// shares it.
    pub fn remove(&mut self, name: &str, version: &str) -> Result<RegisteredOperation, RegistryError> {
        let _lock = self.lock()?;
        if let Some(dir) = self.dir.clone() {
            *self = Self::load(&dir)?;
        }
        let i = self
            .operations
            .iter()
            .position(|op| op.name() == name && op.manifest.version == version)
            .ok_or_else(|| RegistryError::NotFound { name: name.into(), version: version.into() })?;
        let op = self.operations.remove(i);
        self.forget(&op)?;
        Ok(op)
    }

    /// Deletes `op`'s files from disk (already out of `self.operations`).
    fn forget(&self, op: &RegisteredOperation) -> Result<(), RegistryError> {
        let Some(dir) = &self.dir else { return Ok(()) };
        let path = entry_path(dir, op.name(), &op.manifest.version);
        std::fs::remove_file(&path).map_err(fsutil::at(&path))?;
        if !self.operations.iter().any(|o| o.source_id() == op.source_id()) {
            if let Some(source) = op.source_dir() {
                std::fs::remove_dir_all(source).map_err(fsutil::at(source))?;
            }
        }
        Ok(())
    }
}

fn entry_path(dir: &Path, name: &str, version: &str) -> PathBuf {
    dir.join("operations").join(name).join(format!("{version}.json"))
}

/// Names this binary's built-ins: the content id of everything it embeds
/// (cheap, so opening a registry prepares the built-ins only when they are
/// not registered yet).
fn builtin_stamp() -> &'static str {
    vendor::embedded_id()
}
