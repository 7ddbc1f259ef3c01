//! The packages the registries serve (`/cargo/`, `/npm/`): one row per
//! ecosystem, name and version, pointing at an artifact (a `.crate`, an
//! npm `.tgz`) with what its index or package document says of it. A
//! version is immutable: the first build that brings a name and version
//! is what the registries serve, a later build of the same version with
//! other bytes leaves it as it was (and says so in the log).

use rusqlite::{params, OptionalExtension, Transaction};

use super::Artifact;
use super::{now, Sqlite, StoreError};
use crate::ids::ContentId;

/// What `packages.build_id` says of packages that come from the operation
/// registry rather than from a build.
const FROM_REGISTRY: &str = "registry";

/// Which registry a package is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ecosystem {
    Cargo,
    Npm,
}

impl Ecosystem {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Ecosystem::Cargo => "cargo",
            Ecosystem::Npm => "npm",
        }
    }
}

impl std::str::FromStr for Ecosystem {
    type Err = String;

    /// `cargo` or `npm`, as a build's distribution names them.
    fn from_str(s: &str) -> Result<Self, String> {
        [Ecosystem::Cargo, Ecosystem::Npm]
            .into_iter()
            .find(|e| e.as_str() == s)
            .ok_or_else(|| format!("an unknown registry {s:?} (cargo or npm)"))
    }
}

/// A package of a build, as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Package {
    pub ecosystem: Ecosystem,
    pub name: String,
    pub version: String,
    /// The artifact holding its archive.
    pub cid: ContentId,
    /// Cargo: the index line (JSON). npm: the version's document without
    /// `dist` (JSON), which is made per request (its URL names the host).
    pub entry: String,
    /// Cargo: the SHA-256 (hex) of the `.crate`, as the index line says.
    /// npm: the `integrity` (`sha512-...`).
    pub digest: String,
}

/// The packages the registries serve.
pub trait Packages {
    /// Every version of a package, oldest first.
    fn package_versions(&self, ecosystem: Ecosystem, name: &str) -> Result<Vec<Package>, StoreError>;

    /// Records packages of the operation registry's crates (stored as
    /// `artifacts`), each on its own: one whose version is already served
    /// with other bytes is left out (and named in the answer), the others
    /// are added.
    fn add_registry_packages(&self, artifacts: &[Artifact], packages: &[Package]) -> Result<Vec<String>, StoreError>;

    /// One version of a package.
    fn package(&self, ecosystem: Ecosystem, name: &str, version: &str) -> Result<Option<Package>, StoreError> {
        Ok(self.package_versions(ecosystem, name)?.into_iter().find(|p| p.version == version))
    }
}

impl Packages for Sqlite {
    /// Every version of a package, oldest first.
    fn package_versions(&self, ecosystem: Ecosystem, name: &str) -> Result<Vec<Package>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(
            "SELECT name, version, cid, entry, digest FROM packages WHERE ecosystem = ?1 AND name = ?2
             ORDER BY created_at, version",
        )?;
        let rows = stmt
            .query_map(params![ecosystem.as_str(), name], |r| {
                Ok(Package {
                    ecosystem,
                    name: r.get(0)?,
                    version: r.get(1)?,
                    cid: r.get(2)?,
                    entry: r.get(3)?,
                    digest: r.get(4)?,
                })
            })?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// Records packages of the operation registry's crates (stored as
    /// `artifacts`), each on its own: one whose version is already served
    /// with other bytes is left out (and named in the answer), the others
    /// are added.
    fn add_registry_packages(&self, artifacts: &[Artifact], packages: &[Package]) -> Result<Vec<String>, StoreError> {
        let mut conn = self.writer()?;
        let tx = conn.transaction()?;
        super::insert_artifacts(&tx, artifacts)?;
        let mut conflicts = Vec::new();
        for p in packages {
            conflicts.extend(record(&tx, FROM_REGISTRY, std::slice::from_ref(p))?);
        }
        tx.commit()?;
        Ok(conflicts)
    }
}

/// The rule of every backend: packages recorded together are recorded all
/// or none, and none if one of them has a version already served with
/// other bytes (a registry never changes a published version, and a set of
/// crates built together must be served together). `served[i]` is the
/// digest `packages[i]`'s name and version is served with, if any. The
/// packages to add, or the names that keep them all out.
pub(super) fn sort_out<'a>(
    packages: &'a [Package],
    served: &[Option<String>],
) -> Result<Vec<&'a Package>, Vec<String>> {
    let mut conflicts = Vec::new();
    let mut fresh = Vec::new();
    for (p, served) in packages.iter().zip(served) {
        match served {
            Some(digest) if *digest == p.digest => {}
            Some(_) => conflicts.push(format!("{} {}@{}", p.ecosystem.as_str(), p.name, p.version)),
            None => fresh.push(p),
        }
    }
    if conflicts.is_empty() {
        Ok(fresh)
    } else {
        Err(conflicts)
    }
}

/// Records a build's packages, each ecosystem's with `record` (all or
/// none, see [`sort_out`]), and logs those left out.
pub(super) fn record_build(
    build: &str,
    packages: &[Package],
    mut record: impl FnMut(&[Package]) -> Result<Vec<String>, StoreError>,
) -> Result<(), StoreError> {
    for ecosystem in [Ecosystem::Cargo, Ecosystem::Npm] {
        let of: Vec<Package> = packages.iter().filter(|p| p.ecosystem == ecosystem).cloned().collect();
        let conflicts = record(&of)?;
        if !conflicts.is_empty() {
            tracing::warn!(
                build,
                "not in the registries: {} already published with other content (bump the workflow's version)",
                conflicts.join(", ")
            );
        }
    }
    Ok(())
}

/// Records `packages` from `source` (a build id, or the registry) in SQLite.
pub(super) fn record(tx: &Transaction<'_>, source: &str, packages: &[Package]) -> Result<Vec<String>, StoreError> {
    let served = packages
        .iter()
        .map(|p| {
            tx.query_row(
                "SELECT digest FROM packages WHERE ecosystem = ?1 AND name = ?2 AND version = ?3",
                params![p.ecosystem.as_str(), p.name, p.version],
                |r| r.get(0),
            )
            .optional()
        })
        .collect::<Result<Vec<Option<String>>, _>>()?;
    let fresh = match sort_out(packages, &served) {
        Ok(fresh) => fresh,
        Err(conflicts) => return Ok(conflicts),
    };
    for p in fresh {
        tx.execute(
            "INSERT INTO packages (ecosystem, name, version, cid, entry, digest, build_id, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![p.ecosystem.as_str(), p.name, p.version, p.cid, p.entry, p.digest, source, now()],
        )?;
    }
    Ok(Vec::new())
}
