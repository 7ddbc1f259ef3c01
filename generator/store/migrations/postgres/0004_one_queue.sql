-- One queue for every kind of job, as SQLite's version 7: every job is a
-- row of `jobs` with its `kind` and its `subject` (a build id, a version
-- id), and `publishes` keeps only what a publish job is about. Jobs keep
-- their ids, states, logs, attempts and leases; their order is their
-- submission order. The schema's version is sqlx's from now on.
CREATE TABLE queue (
    id TEXT PRIMARY KEY, kind TEXT NOT NULL, subject TEXT COLLATE "C" NOT NULL, state TEXT NOT NULL,
    progress TEXT NOT NULL DEFAULT '', log TEXT NOT NULL DEFAULT '', error TEXT,
    attempts BIGINT NOT NULL DEFAULT 0, created_at BIGINT NOT NULL,
    started_at BIGINT, finished_at BIGINT, seq BIGINT NOT NULL,
    lease_owner TEXT, lease_until BIGINT);
INSERT INTO queue
SELECT id, kind, subject, state, progress, log, error, attempts, created_at, started_at, finished_at,
       ROW_NUMBER() OVER (ORDER BY created_at, kind, seq), lease_owner, lease_until
FROM (SELECT id, 'build' AS kind, build_id AS subject, state, progress, log, error, attempts,
             created_at, started_at, finished_at, seq, lease_owner, lease_until FROM jobs
      UNION ALL
      SELECT id, 'publish', version_id, state, progress, log, error, attempts,
             created_at, started_at, finished_at, seq, lease_owner, lease_until FROM publishes) AS old;
DROP TABLE jobs;
ALTER TABLE queue RENAME TO jobs;
ALTER INDEX queue_pkey RENAME TO jobs_pkey;
CREATE INDEX jobs_claim ON jobs(kind, state, seq);
CREATE INDEX jobs_subject ON jobs(subject, kind, state);
CREATE TABLE publishes_about (
    id TEXT PRIMARY KEY, name TEXT NOT NULL, version TEXT NOT NULL, version_id TEXT NOT NULL,
    source_cid TEXT);
INSERT INTO publishes_about SELECT id, name, version, version_id, source_cid FROM publishes;
DROP TABLE publishes;
ALTER TABLE publishes_about RENAME TO publishes;
ALTER INDEX publishes_about_pkey RENAME TO publishes_pkey;
DROP TABLE IF EXISTS braid_schema;
