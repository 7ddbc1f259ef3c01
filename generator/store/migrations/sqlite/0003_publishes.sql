-- Operations published to the service, each checked by a job.
CREATE TABLE publishes (
    id TEXT PRIMARY KEY, name TEXT NOT NULL, version TEXT NOT NULL, version_id TEXT NOT NULL,
    state TEXT NOT NULL, progress TEXT NOT NULL DEFAULT '', log TEXT NOT NULL DEFAULT '', error TEXT,
    attempts INTEGER NOT NULL DEFAULT 0, created_at INTEGER NOT NULL,
    started_at INTEGER, finished_at INTEGER, seq INTEGER NOT NULL);
CREATE INDEX publishes_state ON publishes(state, seq);
CREATE INDEX publishes_version ON publishes(version_id, state);
