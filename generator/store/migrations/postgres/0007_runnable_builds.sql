-- When each build succeeded (milliseconds since the epoch; NULL before),
-- so that a run by workflow id finds the build that succeeded last with
-- one indexed query. Builds that succeeded before: their creation time.
ALTER TABLE builds ADD COLUMN built_at BIGINT;
UPDATE builds SET built_at = created_at * 1000 WHERE state = 'succeeded';
CREATE INDEX builds_built ON builds(workflow_id, built_at);
