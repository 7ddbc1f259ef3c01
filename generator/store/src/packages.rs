//! The packages the registries serve (`/cargo/`, `/npm/`): one row per
//! ecosystem, name and version, pointing at an artifact (a `.crate`, an
//! npm `.tgz`) with what its index or package document says of it. A
//! version is immutable: the first build that brings a name and version
//! is what the registries serve, a later build of the same version with
//! other bytes leaves it as it was (and says so in the log).

use sqlx::{Any, Transaction};

use super::rows::{parsed, text};
use super::{insert_artifacts, now, Artifact, Lock, Store, StoreError};
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

/// Every registry.
pub(super) const ECOSYSTEMS: [Ecosystem; 2] = [Ecosystem::Cargo, Ecosystem::Npm];

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
        ECOSYSTEMS
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

impl Store {
    /// Every version of a package, oldest first.
    pub async fn package_versions(&self, ecosystem: Ecosystem, name: &str) -> Result<Vec<Package>, StoreError> {
        sqlx::query(
            "SELECT name, version, cid, entry, digest FROM packages WHERE ecosystem = $1 AND name = $2
             ORDER BY created_at, version",
        )
        .bind(ecosystem.as_str())
        .bind(name)
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(|r| {
            Ok(Package {
                ecosystem,
                name: text(r, 0)?,
                version: text(r, 1)?,
                cid: parsed(r, 2)?,
                entry: text(r, 3)?,
                digest: text(r, 4)?,
            })
        })
        .collect()
    }

    /// One version of a package.
    pub async fn package(
        &self,
        ecosystem: Ecosystem,
        name: &str,
        version: &str,
    ) -> Result<Option<Package>, StoreError> {
        Ok(self.package_versions(ecosystem, name).await?.into_iter().find(|p| p.version == version))
    }

    /// Records packages of the operation registry's crates (stored as
    /// `artifacts`), each on its own: one whose version is already served
    /// with other bytes is left out (and named in the answer), the others
    /// are added.
    pub async fn add_registry_packages(
        &self,
        artifacts: &[Artifact],
        packages: &[Package],
    ) -> Result<Vec<String>, StoreError> {
        let mut tx = self.writer().await?;
        self.serialize(&mut tx, Lock::Packages, "").await?;
        insert_artifacts(&mut tx, artifacts).await?;
        let mut conflicts = Vec::new();
        for p in packages {
            conflicts.extend(record(&mut tx, FROM_REGISTRY, std::slice::from_ref(p)).await?);
        }
        tx.commit().await?;
        Ok(conflicts)
    }
}

/// Records `packages` from `source` (a build id, or the registry) in `tx`,
/// all or none: none if one of them has a version already served with
/// other bytes (a registry never changes a published version, and a set
/// of crates built together must be served together). Returns the names
/// that kept them out. The caller holds [`Lock::Packages`].
pub(super) async fn record(
    tx: &mut Transaction<'static, Any>,
    source: &str,
    packages: &[Package],
) -> Result<Vec<String>, StoreError> {
    let mut conflicts = Vec::new();
    let mut fresh = Vec::new();
    for p in packages {
        let served = sqlx::query("SELECT digest FROM packages WHERE ecosystem = $1 AND name = $2 AND version = $3")
            .bind(p.ecosystem.as_str())
            .bind(&p.name)
            .bind(&p.version)
            .fetch_optional(&mut **tx)
            .await?;
        match served.map(|r| text(&r, 0)).transpose()? {
            Some(digest) if digest == p.digest => {}
            Some(_) => conflicts.push(format!("{} {}@{}", p.ecosystem.as_str(), p.name, p.version)),
            None => fresh.push(p),
        }
    }
    if !conflicts.is_empty() {
        return Ok(conflicts);
    }
    for p in fresh {
        sqlx::query(
            "INSERT INTO packages (ecosystem, name, version, cid, entry, digest, build_id, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(p.ecosystem.as_str())
        .bind(&p.name)
        .bind(&p.version)
        .bind(p.cid.as_str())
        .bind(&p.entry)
        .bind(&p.digest)
        .bind(source)
        .bind(now())
        .execute(&mut **tx)
        .await?;
    }
    Ok(Vec::new())
}
