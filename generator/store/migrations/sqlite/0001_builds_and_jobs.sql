-- The schema before versions were counted. A database from then is at
-- version 0 with these tables already there, hence `IF NOT EXISTS`.
-- `workflows` were builds (keyed by the build key), `jobs.workflow_id`
-- named a build.
CREATE TABLE IF NOT EXISTS workflows (
    id TEXT PRIMARY KEY, name TEXT NOT NULL, manifest TEXT NOT NULL, targets TEXT NOT NULL,
    state TEXT NOT NULL, report TEXT, artifacts TEXT, created_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS jobs (
    id TEXT PRIMARY KEY, workflow_id TEXT NOT NULL, state TEXT NOT NULL,
    progress TEXT NOT NULL DEFAULT '', log TEXT NOT NULL DEFAULT '', error TEXT,
    attempts INTEGER NOT NULL DEFAULT 0, created_at INTEGER NOT NULL,
    started_at INTEGER, finished_at INTEGER, seq INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS jobs_state ON jobs(state, seq);
CREATE TABLE IF NOT EXISTS artifacts (cid TEXT PRIMARY KEY, size INTEGER NOT NULL, media_type TEXT NOT NULL);
