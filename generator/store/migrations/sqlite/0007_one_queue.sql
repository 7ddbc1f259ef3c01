-- One queue for every kind of job. `jobs` held build jobs and `publishes`
-- publish jobs, each with its own life cycle columns; now every job is a
-- row of `jobs` with its `kind` and its `subject` (a build id, a version
-- id), leased to the process running it, and `publishes` keeps only what
-- a publish job is about. Jobs keep their ids, states, logs and attempts;
-- their order is their submission order.
CREATE TABLE queue (
    id TEXT PRIMARY KEY, kind TEXT NOT NULL, subject TEXT NOT NULL, state TEXT NOT NULL,
    progress TEXT NOT NULL DEFAULT '', log TEXT NOT NULL DEFAULT '', error TEXT,
    attempts INTEGER NOT NULL DEFAULT 0, created_at INTEGER NOT NULL,
    started_at INTEGER, finished_at INTEGER, seq INTEGER NOT NULL,
    lease_owner TEXT, lease_until INTEGER);
INSERT INTO queue (id, kind, subject, state, progress, log, error, attempts, created_at, started_at, finished_at, seq)
SELECT id, kind, subject, state, progress, log, error, attempts, created_at, started_at, finished_at,
       ROW_NUMBER() OVER (ORDER BY created_at, kind, seq)
FROM (SELECT id, 'build' AS kind, build_id AS subject, state, progress, log, error, attempts,
             created_at, started_at, finished_at, seq FROM jobs
      UNION ALL
      SELECT id, 'publish', version_id, state, progress, log, error, attempts,
             created_at, started_at, finished_at, seq FROM publishes);
DROP TABLE jobs;
ALTER TABLE queue RENAME TO jobs;
CREATE INDEX jobs_claim ON jobs(kind, state, seq);
CREATE INDEX jobs_subject ON jobs(subject, kind, state);
CREATE TABLE publishes_about (
    id TEXT PRIMARY KEY, name TEXT NOT NULL, version TEXT NOT NULL, version_id TEXT NOT NULL,
    source_cid TEXT);
INSERT INTO publishes_about SELECT id, name, version, version_id, source_cid FROM publishes;
DROP TABLE publishes;
ALTER TABLE publishes_about RENAME TO publishes;
