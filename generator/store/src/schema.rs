//! The schema: sqlx migrations, one list per database
//! (`generator/store/migrations/{sqlite,postgres}`), applied in order
//! when the store opens, each in a transaction (all of it or none), each
//! checksummed: a migration is never edited once released, a change is a
//! new one at the end. A database written by a newer braid is refused.
//!
//! Databases from before sqlx kept their version elsewhere (SQLite in
//! `PRAGMA user_version`, PostgreSQL in `braid_schema`); the first open by
//! this braid records the migrations they had as applied, and the rest run.

use sqlx::migrate::{Migrate as _, Migrator};

use super::rows::{int, text};
use super::{Backend, Store, StoreError};

static SQLITE: Migrator = sqlx::migrate!("migrations/sqlite");
static POSTGRES: Migrator = sqlx::migrate!("migrations/postgres");

/// sqlx's table of applied migrations.
const APPLIED: &str = "_sqlx_migrations";

/// Advisory lock key: one process at a time adopts a schema from before sqlx.
const LOCK_SCHEMA: i32 = 0x6272_0001;

impl Store {
    fn migrator(&self) -> &'static Migrator {
        match self.backend {
            Backend::Sqlite(_) => &SQLITE,
            Backend::Postgres => &POSTGRES,
        }
    }

    /// Whether the database has a table `name`.
    async fn has_table(&self, conn: &mut sqlx::AnyConnection, name: &str) -> Result<bool, StoreError> {
        let sql = match self.backend {
            Backend::Sqlite(_) => "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = $1",
            Backend::Postgres => {
                "SELECT COUNT(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = $1"
            }
        };
        let row = sqlx::query(sql).bind(name).fetch_one(conn).await?;
        Ok(int(&row, 0)? > 0)
    }

    /// The version a database from before sqlx was at (0: none, or new).
    async fn version_before_sqlx(&self, conn: &mut sqlx::AnyConnection) -> Result<i64, StoreError> {
        match self.backend {
            Backend::Sqlite(_) => Ok(int(&sqlx::query("PRAGMA user_version").fetch_one(conn).await?, 0)?),
            Backend::Postgres => {
                if !self.has_table(conn, "braid_schema").await? {
                    return Ok(0);
                }
                let row = sqlx::query("SELECT version FROM braid_schema").fetch_optional(conn).await?;
                Ok(row.map(|r| int(&r, 0)).transpose()?.unwrap_or(0))
            }
        }
    }
}

/// Brings the schema up to date.
pub(super) async fn migrate(store: &Store) -> Result<(), StoreError> {
    let migrator = store.migrator();
    let latest = migrator.iter().map(|m| m.version).max().unwrap_or(0);
    adopt(store, migrator, latest).await?;
    let before = applied(store).await?;
    if before > latest {
        return Err(StoreError::TooNew { found: before, supported: latest });
    }
    migrator.run(&store.pool).await?;
    if before < latest {
        tracing::info!("database schema migrated from version {before} to {latest}");
    }
    fill_in_workflow_ids(store).await
}

/// The newest migration applied.
async fn applied(store: &Store) -> Result<i64, StoreError> {
    let mut conn = store.pool.acquire().await?;
    if !store.has_table(&mut conn, APPLIED).await? {
        return Ok(0);
    }
    let row = sqlx::query("SELECT COALESCE(MAX(version), 0) FROM _sqlx_migrations").fetch_one(&mut *conn).await?;
    int(&row, 0)
}

/// Records the migrations a database from before sqlx had as applied.
async fn adopt(store: &Store, migrator: &Migrator, latest: i64) -> Result<(), StoreError> {
    let mut tx = store.pool.begin().await?;
    if let Backend::Postgres = store.backend {
        sqlx::query("SELECT pg_advisory_xact_lock($1, 0)").bind(LOCK_SCHEMA).execute(&mut *tx).await?;
    }
    if store.has_table(&mut tx, APPLIED).await? {
        return Ok(());
    }
    let version = store.version_before_sqlx(&mut tx).await?;
    if version == 0 {
        return Ok(());
    }
    if version > latest {
        return Err(StoreError::TooNew { found: version, supported: latest });
    }
    tx.ensure_migrations_table(APPLIED).await?;
    for m in migrator.iter().filter(|m| m.version <= version) {
        sqlx::query(
            "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time)
             VALUES ($1, $2, TRUE, $3, 0)",
        )
        .bind(m.version)
        .bind(m.description.as_ref())
        .bind(m.checksum.as_ref())
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await?;
    tracing::info!("database schema from before sqlx, at version {version}: adopted");
    Ok(())
}

/// Builds recorded before they knew their workflow (SQLite migration 2)
/// learn it: the CID of their canonical manifest.
async fn fill_in_workflow_ids(store: &Store) -> Result<(), StoreError> {
    let rows = sqlx::query("SELECT id, manifest FROM builds WHERE workflow_id = ''").fetch_all(&store.pool).await?;
    if rows.is_empty() {
        return Ok(());
    }
    let mut tx = store.writer().await?;
    for row in &rows {
        let workflow_id = braid::content_id(text(row, 1)?.as_bytes());
        sqlx::query("UPDATE builds SET workflow_id = $2 WHERE id = $1")
            .bind(text(row, 0)?)
            .bind(workflow_id)
            .execute(&mut *tx)
            .await?;
    }
    tx.commit().await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{Db, TempDb};
    use crate::Location;

    /// Each migration runs in a transaction: one that fails leaves nothing
    /// of itself, the database at the version before it, and the store
    /// says which failed.
    #[tokio::test]
    async fn a_failing_migration_leaves_the_database_as_it_was() {
        let tmp = TempDb::new(Db::Sqlite).await;
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("0001_a.sql"), "CREATE TABLE a (x INTEGER);").unwrap();
        std::fs::write(dir.path().join("0002_oops.sql"), "CREATE TABLE b (x INTEGER); CREATE TABLE oops (;").unwrap();
        let migrator = Migrator::new(dir.path()).await.unwrap();
        let Location::File(path) = &tmp.location else { unreachable!() };
        sqlx::any::install_default_drivers();
        let pool = sqlx::AnyPool::connect(&crate::sqlite_url(path).unwrap()).await.unwrap();
        let err = StoreError::from(migrator.run(&pool).await.unwrap_err());
        assert!(err.to_string().contains("migration 2"), "{err}");
        let tables = |name: &'static str| {
            sqlx::query("SELECT COUNT(*) FROM sqlite_master WHERE name = $1").bind(name).fetch_one(&pool)
        };
        assert_eq!(int(&tables("a").await.unwrap(), 0).unwrap(), 1, "migration 1 stays");
        assert_eq!(int(&tables("b").await.unwrap(), 0).unwrap(), 0, "migration 2 was rolled back whole");
        let applied =
            sqlx::query("SELECT MAX(version) FROM _sqlx_migrations WHERE success").fetch_one(&pool).await.unwrap();
        assert_eq!(int(&applied, 0).unwrap(), 1);
    }
}
