//! Deployments: names that point at a build, so that a client calls one
//! URL whatever the workflow's content id becomes. A name belongs to the key
//! that made it; pointing it elsewhere (a new build, or an earlier one: a
//! rollback) is one transaction that adds a version to its history, so a
//! run that reads it sees the old build or the new one, never neither.

use serde::{Deserialize, Serialize};

use super::rows::{int, parsed, text};
use super::{now, Lock, Store, StoreError};
use crate::ids::BuildId;

/// Where a name points now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct Deployment {
    /// The name as it was first given (names compare in lower case).
    pub name: String,
    /// Who owns it: a fingerprint of the key that made it.
    pub owner: String,
    #[schema(value_type = String)]
    pub build_id: BuildId,
    /// 1 when made, one more at each change.
    pub version: i64,
    /// When it last changed (seconds since the epoch).
    pub updated_at: i64,
    /// Its own budgets, where tighter than the service's.
    pub limits: DeploymentLimits,
}

/// A deployment's budgets, each at most the service's (absent: the
/// service's).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DeploymentLimits {
    /// Longest a run may take, in milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_ms: Option<u64>,
    /// Most linear memory a run may have, in MiB.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_mib: Option<u64>,
    /// Largest input, in MiB.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_mib: Option<u64>,
    /// Largest output, in MiB.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_mib: Option<u64>,
    /// Runs of the deployment at once, on each server process; a run past
    /// them is refused (429, `Retry-After: 1`) rather than queued.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub concurrent: Option<u64>,
}

/// One change of a name: what it pointed at from then on, who set it, when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct DeploymentVersion {
    pub version: i64,
    #[schema(value_type = String)]
    pub build_id: BuildId,
    pub set_by: String,
    pub set_at: i64,
}

/// What pointing a name gave.
#[derive(Debug, PartialEq, Eq)]
pub enum Deployed {
    /// The name points at the build now (made, or moved).
    Set(Deployment),
    /// The name belongs to another owner; nothing changed.
    Owned(String),
}

/// The form names are compared in.
pub fn name_key(name: &str) -> String {
    name.to_ascii_lowercase()
}

const COLUMNS: &str = "name, owner, build_id, version, updated_at, limits";

fn limits_json(limits: &DeploymentLimits) -> String {
    serde_json::to_string(limits).expect("limits serialize")
}

fn deployment(row: &sqlx::any::AnyRow) -> Result<Deployment, StoreError> {
    Ok(Deployment {
        name: text(row, 0)?,
        owner: text(row, 1)?,
        build_id: parsed(row, 2)?,
        version: int(row, 3)?,
        updated_at: int(row, 4)?,
        limits: serde_json::from_str(&text(row, 5)?)
            .map_err(|e| StoreError::Damaged(format!("a deployment's limits: {e}")))?,
    })
}

impl Store {
    /// Points `name` at `build` for `owner`, with `limits` (`None`: those
    /// it has; none for a new name): makes it if it is new, moves it if
    /// `owner` owns it, else leaves it. Atomic, in any process.
    pub async fn deploy(
        &self,
        name: &str,
        owner: &str,
        build: &BuildId,
        limits: Option<DeploymentLimits>,
    ) -> Result<Deployed, StoreError> {
        let key = name_key(name);
        let mut tx = self.writer().await?;
        self.serialize(&mut tx, Lock::Deploy, &key).await?;
        let select = format!("SELECT {COLUMNS} FROM deployments WHERE name_key = $1{}", self.for_update(false));
        let existing = sqlx::query(sqlx::AssertSqlSafe(select)).bind(&key).fetch_optional(&mut *tx).await?;
        let existing = existing.as_ref().map(deployment).transpose()?;
        let at = now();
        let next = match &existing {
            Some(d) if d.owner != owner => return Ok(Deployed::Owned(d.owner.clone())),
            Some(d) => {
                let limits = limits.unwrap_or(d.limits);
                sqlx::query(
                    "UPDATE deployments SET build_id = $2, version = $3, updated_at = $4, limits = $5 WHERE name_key = $1",
                )
                .bind(&key)
                .bind(build.as_str())
                .bind(d.version + 1)
                .bind(at)
                .bind(limits_json(&limits))
                .execute(&mut *tx)
                .await?;
                Deployment { build_id: build.clone(), version: d.version + 1, updated_at: at, limits, ..d.clone() }
            }
            None => {
                let limits = limits.unwrap_or_default();
                sqlx::query(
                    "INSERT INTO deployments (name_key, name, owner, build_id, version, updated_at, limits)
                     VALUES ($1, $2, $3, $4, 1, $5, $6)",
                )
                .bind(&key)
                .bind(name)
                .bind(owner)
                .bind(build.as_str())
                .bind(at)
                .bind(limits_json(&limits))
                .execute(&mut *tx)
                .await?;
                let (name, owner) = (name.to_string(), owner.to_string());
                Deployment { name, owner, build_id: build.clone(), version: 1, updated_at: at, limits }
            }
        };
        sqlx::query(
            "INSERT INTO deployment_versions (name_key, version, build_id, set_by, set_at) VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(&key)
        .bind(next.version)
        .bind(build.as_str())
        .bind(owner)
        .bind(at)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(Deployed::Set(next))
    }

    /// Where `name` points, if it is a deployment (one indexed read).
    pub async fn deployment(&self, name: &str) -> Result<Option<Deployment>, StoreError> {
        let select = format!("SELECT {COLUMNS} FROM deployments WHERE name_key = $1");
        let row = sqlx::query(sqlx::AssertSqlSafe(select)).bind(name_key(name)).fetch_optional(&self.pool).await?;
        row.as_ref().map(deployment).transpose()
    }

    /// Every change of `name`, the newest first.
    pub async fn deployment_versions(&self, name: &str) -> Result<Vec<DeploymentVersion>, StoreError> {
        sqlx::query(
            "SELECT version, build_id, set_by, set_at FROM deployment_versions WHERE name_key = $1
             ORDER BY version DESC",
        )
        .bind(name_key(name))
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(|r| {
            Ok(DeploymentVersion {
                version: int(r, 0)?,
                build_id: parsed(r, 1)?,
                set_by: text(r, 2)?,
                set_at: int(r, 3)?,
            })
        })
        .collect()
    }

    /// Every deployment, by name.
    pub async fn deployments(&self) -> Result<Vec<Deployment>, StoreError> {
        let select = format!("SELECT {COLUMNS} FROM deployments ORDER BY name_key");
        sqlx::query(sqlx::AssertSqlSafe(select)).fetch_all(&self.pool).await?.iter().map(deployment).collect()
    }

    /// Removes `name` and its history if `owner` owns it: `None` if there
    /// is no such name, `Some(Err(owner))` if another owns it.
    pub async fn undeploy(&self, name: &str, owner: &str) -> Result<Option<Result<(), String>>, StoreError> {
        let key = name_key(name);
        let mut tx = self.writer().await?;
        self.serialize(&mut tx, Lock::Deploy, &key).await?;
        let select = format!("SELECT owner FROM deployments WHERE name_key = $1{}", self.for_update(false));
        let Some(row) = sqlx::query(sqlx::AssertSqlSafe(select)).bind(&key).fetch_optional(&mut *tx).await? else {
            return Ok(None);
        };
        let found = text(&row, 0)?;
        if found != owner {
            return Ok(Some(Err(found)));
        }
        for table in ["deployments", "deployment_versions"] {
            sqlx::query(sqlx::AssertSqlSafe(format!("DELETE FROM {table} WHERE name_key = $1")))
                .bind(&key)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(Some(Ok(())))
    }
}
