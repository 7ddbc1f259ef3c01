-- Builds are called builds, and each knows its workflow: the CID of its
-- manifest, computed from the canonical manifest stored with it. SQL cannot
-- hash, so the store fills in the ids left empty here when it opens
-- (`store::migrate`).
ALTER TABLE workflows RENAME TO builds;
ALTER TABLE builds ADD COLUMN workflow_id TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs RENAME COLUMN workflow_id TO build_id;
CREATE INDEX builds_workflow ON builds(workflow_id, created_at);
