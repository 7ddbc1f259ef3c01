//! The database schema as a numbered list of migrations. `PRAGMA
//! user_version` holds how many have been applied; [`migrate`] applies the
//! rest in one transaction when the store opens (all or none), and refuses
//! a database written by a newer server, whose schema this one does not
//! know. A migration is never edited once released: a change is a new one
//! at the end.

use rusqlite::{params, Transaction};

use super::StoreError;

/// One step of the schema.
enum Migration {
    Sql(&'static str),
    Code(fn(&Transaction<'_>) -> rusqlite::Result<()>),
}

/// Migration `i` (from 0) takes the database from version `i` to `i + 1`.
const MIGRATIONS: &[Migration] = &[
    // 1: the schema before versions were counted. A database from then is at
    // version 0 with these tables already there, hence `IF NOT EXISTS`.
    // `workflows` were builds (keyed by the build key), `jobs.workflow_id`
    // named a build.
    Migration::Sql(
        "CREATE TABLE IF NOT EXISTS workflows (
            id TEXT PRIMARY KEY, name TEXT NOT NULL, manifest TEXT NOT NULL, targets TEXT NOT NULL,
            state TEXT NOT NULL, report TEXT, artifacts TEXT, created_at INTEGER NOT NULL);
         CREATE TABLE IF NOT EXISTS jobs (
            id TEXT PRIMARY KEY, workflow_id TEXT NOT NULL, state TEXT NOT NULL,
            progress TEXT NOT NULL DEFAULT '', log TEXT NOT NULL DEFAULT '', error TEXT,
            attempts INTEGER NOT NULL DEFAULT 0, created_at INTEGER NOT NULL,
            started_at INTEGER, finished_at INTEGER, seq INTEGER NOT NULL);
         CREATE INDEX IF NOT EXISTS jobs_state ON jobs(state, seq);
         CREATE TABLE IF NOT EXISTS artifacts (cid TEXT PRIMARY KEY, size INTEGER NOT NULL, media_type TEXT NOT NULL);",
    ),
    // 2: builds are called builds, and each knows its workflow (the CID of
    // its manifest, computed from the canonical manifest stored with it).
    Migration::Code(builds_know_their_workflow),
    // 3: operations published to the service, each checked by a job.
    Migration::Sql(
        "CREATE TABLE publishes (
            id TEXT PRIMARY KEY, name TEXT NOT NULL, version TEXT NOT NULL, version_id TEXT NOT NULL,
            state TEXT NOT NULL, progress TEXT NOT NULL DEFAULT '', log TEXT NOT NULL DEFAULT '', error TEXT,
            attempts INTEGER NOT NULL DEFAULT 0, created_at INTEGER NOT NULL,
            started_at INTEGER, finished_at INTEGER, seq INTEGER NOT NULL);
         CREATE INDEX publishes_state ON publishes(state, seq);
         CREATE INDEX publishes_version ON publishes(version_id, state);",
    ),
    // 4: the packages the Cargo and npm registries serve.
    Migration::Sql(
        "CREATE TABLE packages (
            ecosystem TEXT NOT NULL, name TEXT NOT NULL, version TEXT NOT NULL, cid TEXT NOT NULL,
            entry TEXT NOT NULL, digest TEXT NOT NULL, build_id TEXT NOT NULL, created_at INTEGER NOT NULL,
            PRIMARY KEY (ecosystem, name, version));
         CREATE INDEX packages_cid ON packages(cid);",
    ),
    // 5: an upload's archive is kept in the artifact store (`source_cid`),
    // so that any process can check it; `operations` lists those
    // registered, so that every process's registry can take them in.
    Migration::Sql(
        "ALTER TABLE publishes ADD COLUMN source_cid TEXT;
         CREATE TABLE operations (
            name TEXT NOT NULL, version TEXT NOT NULL, version_id TEXT NOT NULL, source_cid TEXT NOT NULL,
            registered_at INTEGER NOT NULL, PRIMARY KEY (name, version));",
    ),
    // 6: who may publish versions of an operation name: its first
    // publisher, and those the operator adds.
    Migration::Sql(
        "CREATE TABLE owners (
            name TEXT NOT NULL, owner TEXT NOT NULL, added_at INTEGER NOT NULL, PRIMARY KEY (name, owner));",
    ),
];

/// The version this server writes.
pub const LATEST: i64 = MIGRATIONS.len() as i64;

fn builds_know_their_workflow(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute_batch(
        "ALTER TABLE workflows RENAME TO builds;
         ALTER TABLE builds ADD COLUMN workflow_id TEXT NOT NULL DEFAULT '';
         ALTER TABLE jobs RENAME COLUMN workflow_id TO build_id;
         CREATE INDEX builds_workflow ON builds(workflow_id, created_at);",
    )?;
    let rows: Vec<(String, String)> = tx
        .prepare("SELECT id, manifest FROM builds")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    for (id, manifest) in rows {
        // The stored manifest is its canonical JSON: its CID is the workflow id.
        let workflow_id = braid::content_id(manifest.as_bytes());
        tx.execute("UPDATE builds SET workflow_id = ?2 WHERE id = ?1", params![id, workflow_id])?;
    }
    Ok(())
}

/// Brings the database to [`LATEST`], in one transaction.
pub fn migrate(conn: &mut rusqlite::Connection) -> Result<(), StoreError> {
    migrate_to(conn, MIGRATIONS)
}

fn migrate_to(conn: &mut rusqlite::Connection, migrations: &[Migration]) -> Result<(), StoreError> {
    let latest = migrations.len() as i64;
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let found: i64 = tx.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if found > latest {
        return Err(StoreError::TooNew { found, supported: latest });
    }
    for (i, migration) in migrations.iter().enumerate().skip(found.max(0) as usize) {
        let applied = match migration {
            Migration::Sql(sql) => tx.execute_batch(sql),
            Migration::Code(f) => f(&tx),
        };
        applied.map_err(|source| StoreError::Migration { version: i as i64 + 1, source })?;
    }
    if found != latest {
        tx.pragma_update(None, "user_version", latest)?;
        tracing::info!("database schema migrated from version {found} to {latest}");
    }
    tx.commit()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn version(conn: &rusqlite::Connection) -> i64 {
        conn.pragma_query_value(None, "user_version", |r| r.get(0)).unwrap()
    }

    #[test]
    fn a_failing_migration_leaves_the_database_as_it_was() {
        let mut conn = rusqlite::Connection::open_in_memory().unwrap();
        let steps = [Migration::Sql("CREATE TABLE a (x INTEGER);"), Migration::Sql("CREATE TABLE oops (;")];
        let err = migrate_to(&mut conn, &steps).unwrap_err();
        assert!(matches!(err, StoreError::Migration { version: 2, .. }), "{err}");
        assert_eq!(version(&conn), 0);
        let tables: i64 =
            conn.query_row("SELECT COUNT(*) FROM sqlite_master WHERE name = 'a'", [], |r| r.get(0)).unwrap();
        assert_eq!(tables, 0, "migration 1 was rolled back with 2");
        migrate_to(&mut conn, &steps[..1]).unwrap();
        assert_eq!(version(&conn), 1);
    }

    #[test]
    fn a_newer_database_is_refused() {
        let mut conn = rusqlite::Connection::open_in_memory().unwrap();
        conn.pragma_update(None, "user_version", LATEST + 1).unwrap();
        let err = migrate(&mut conn).unwrap_err();
        assert!(matches!(err, StoreError::TooNew { .. }), "{err}");
        assert!(err.to_string().contains(&format!("schema version {}", LATEST + 1)), "{err}");
        assert_eq!(version(&conn), LATEST + 1, "left alone");
    }
}
