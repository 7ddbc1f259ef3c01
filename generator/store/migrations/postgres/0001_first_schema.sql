-- The schema of SQLite's version 4, with leases; ids compare bytewise.
CREATE TABLE builds (
   id TEXT COLLATE "C" PRIMARY KEY, workflow_id TEXT COLLATE "C" NOT NULL, name TEXT NOT NULL,
   manifest TEXT NOT NULL, targets TEXT NOT NULL, state TEXT NOT NULL, report TEXT, artifacts TEXT,
   created_at BIGINT NOT NULL);
CREATE INDEX builds_workflow ON builds(workflow_id, created_at);
CREATE TABLE jobs (
   id TEXT PRIMARY KEY, build_id TEXT COLLATE "C" NOT NULL REFERENCES builds(id), state TEXT NOT NULL,
   progress TEXT NOT NULL DEFAULT '', log TEXT NOT NULL DEFAULT '', error TEXT,
   attempts BIGINT NOT NULL DEFAULT 0, created_at BIGINT NOT NULL, started_at BIGINT, finished_at BIGINT,
   seq BIGSERIAL NOT NULL, lease_owner TEXT, lease_until BIGINT);
CREATE INDEX jobs_state ON jobs(state, seq);
CREATE INDEX jobs_build ON jobs(build_id, state);
CREATE TABLE artifacts (cid TEXT PRIMARY KEY, size BIGINT NOT NULL, media_type TEXT NOT NULL);
CREATE TABLE publishes (
   id TEXT PRIMARY KEY, name TEXT NOT NULL, version TEXT NOT NULL, version_id TEXT NOT NULL,
   state TEXT NOT NULL, progress TEXT NOT NULL DEFAULT '', log TEXT NOT NULL DEFAULT '', error TEXT,
   attempts BIGINT NOT NULL DEFAULT 0, created_at BIGINT NOT NULL, started_at BIGINT, finished_at BIGINT,
   seq BIGSERIAL NOT NULL, lease_owner TEXT, lease_until BIGINT);
CREATE INDEX publishes_state ON publishes(state, seq);
CREATE INDEX publishes_version ON publishes(version_id, state);
CREATE TABLE packages (
   ecosystem TEXT NOT NULL, name TEXT NOT NULL, version TEXT NOT NULL, cid TEXT NOT NULL,
   entry TEXT NOT NULL, digest TEXT NOT NULL, build_id TEXT NOT NULL, created_at BIGINT NOT NULL,
   PRIMARY KEY (ecosystem, name, version));
CREATE INDEX packages_cid ON packages(cid);
